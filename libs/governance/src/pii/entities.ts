/**
 * The PII entity types the detectors know, their labels and the default score threshold. Framework-free: policies
 * (`containsPii`) and trace masking import these shapes from the module's index.
 */

import { PII_ENTITIES, type PiiEntity } from '#platform';

// The names are the platform's (security/pii-entities.ts), so that identity can validate the masking setting.
export { PII_ENTITIES, type PiiEntity };

/** One detected value: `text.slice(start, end)`, in UTF-16 code units, with a score in [0, 1]. */
export interface PiiMatch {
  readonly entity: PiiEntity;
  readonly start: number;
  readonly end: number;
  readonly score: number;
}

/**
 * 0.5: every value backed by a strong checksum or an unambiguous shape (card, IBAN, codice fiscale, NIR, DNI/NIE,
 * e-mail, an international or formatted phone number, IP address, dashed SSN, NINO) scores above it on its own; the
 * weakly checked numbers (BSN's 11-test, PESEL, the German tax id, an unseparated SSN or phone number), which a random
 * 9- or 11-digit number passes about once in 10 to 100, score 0.3 to 0.45 and pass only with a context word nearby
 * (+0.35). The same split as Presidio's, where such recognizers start low and context lifts them.
 */
export const DEFAULT_MIN_SCORE = 0.5;

const LABELS: Readonly<Record<PiiEntity, string>> = {
  email: 'EMAIL',
  phone: 'PHONE',
  creditCard: 'CREDIT_CARD',
  iban: 'IBAN',
  ipAddress: 'IP_ADDRESS',
  usSsn: 'US_SSN',
  ukNino: 'UK_NINO',
  deTaxId: 'DE_TAX_ID',
  frNir: 'FR_NIR',
  esDni: 'ES_DNI',
  itFiscalCode: 'IT_FISCAL_CODE',
  nlBsn: 'NL_BSN',
  plPesel: 'PL_PESEL',
};

/** The entity's label in upper snake case: `creditCard` -> `CREDIT_CARD`, `iban` -> `IBAN`. */
export function piiLabel(entity: PiiEntity): string {
  return LABELS[entity];
}

export function isPiiEntity(value: unknown): value is PiiEntity {
  return typeof value === 'string' && Object.hasOwn(LABELS, value);
}

/** Bit of each entity in a mask (the scanner's fast set). */
export const ENTITY_BIT: Readonly<Record<PiiEntity, number>> = Object.fromEntries(
  PII_ENTITIES.map((e, i) => [e, 1 << i]),
) as Record<PiiEntity, number>;

/** The entities of a set as a bit mask. */
export function entityMask(entities: ReadonlySet<PiiEntity>): number {
  let mask = 0;
  for (const e of entities) mask |= ENTITY_BIT[e] ?? 0;
  return mask;
}
