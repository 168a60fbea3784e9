/** The OpenAPI text of the organization routes (organizations.controller.ts), kept out of the controller. */

export const ORGANIZATION_DOCS = {
  update:
    'Owner or admin. `name`, `traceRetentionDays` (at least 183, or null to keep traces for ever; the ' +
    'scheduler purges older traces daily) and/or `contestContact` (whom a person contests a decision with, shown in ' +
    'GET /traces/{id}/explanation; 1 to 500 characters, or null) and/or `piiMasking` (`{entities, mode}`: the PII ' +
    'types masked in the content of every trace stored from then on, `redact` or `hash`; null turns it off; ' +
    'docs/data-protection.md, "Masking at ingestion"). Writes `organization.updated` with the changes of the first ' +
    'three, and `organization.pii_masking_updated` with `{from, to}` for masking.',
  remove:
    'Body `{confirmName}`, which must equal the organization’s name exactly (else 400 `VALIDATION_ERROR` and ' +
    'nothing changes). From the answer on, every session, membership, workspace key, agent key and pending ' +
    'invitation of the organization is refused (401). Its data is erased after `ORG_DELETION_GRACE_DAYS` ' +
    '(default 30, `eraseAfter`); until then the operator can restore it (`org:restore`) and export it ' +
    '(`org:export`). Writes `organization.delete_requested`.',
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const ORGANIZATION_ERRORS = {
  remove: { 400: 'VALIDATION_ERROR (confirmName missing or not the organization’s name)' },
} as const;
