/**
 * The kinds of personal data the service's detectors find (governance's `pii/`), named once for every library: the
 * policy operator `containsPii` and the organization's masking setting (`piiMasking`, validated by identity) both
 * take these names. See docs/agent-builders.md, "PII detectors".
 */
export const PII_ENTITIES = [
  'email',
  'phone',
  'creditCard',
  'iban',
  'ipAddress',
  'usSsn',
  'ukNino',
  'deTaxId',
  'frNir',
  'esDni',
  'itFiscalCode',
  'nlBsn',
  'plPesel',
] as const;
export type PiiEntity = (typeof PII_ENTITIES)[number];

/** How masking at ingestion writes a match: `<IBAN>`, or `<IBAN:` and 12 hex of a keyed hash `>`. */
export const PII_MASKING_MODES = ['redact', 'hash'] as const;
export type PiiMaskingMode = (typeof PII_MASKING_MODES)[number];

/** An organization's masking setting (PATCH /organizations/current `piiMasking`). */
export interface PiiMaskingSetting {
  entities: PiiEntity[];
  mode: PiiMaskingMode;
}
