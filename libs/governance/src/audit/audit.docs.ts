import type { ApiResponseOptions } from '@nestjs/swagger';

/** The OpenAPI text of the audit routes (audit.controller.ts), kept out of the controller. */

/** The per-user limiter of the routes that walk the whole chain (`AUDIT_CHAIN_RATE_LIMIT`). */
const AUDIT_CHAIN_LIMITED = {
  429: 'RATE_LIMITED (the per-user limiter of chain verification, checkpoints and export; see Retry-After)',
};

export const AUDIT_DOCS = {
  list:
    "Newest first. Owner or admin. limit default 50, max 200. Without filters `pagination.total` is the chain's " +
    'length; with filters the count stops after 10,000 matches beyond the page asked for, and ' +
    '`pagination.totalCapped: true` then marks `total` as a lower bound.',
  verify:
    "Recomputes each entry's hash and link in sequence order, streaming the chain in pages (memory does not grow " +
    'with the log). Incremental: checks the entries after the prefix verified by the last run (whose entry must ' +
    'still carry the hash then verified), up to the head; `full=true` checks every entry from the first. Also ' +
    'checks the chain against its highest signed checkpoint. `brokenAt` names the first failure. `content=true` ' +
    "also checks every trace's stored content against the `metadata.contentHash` of its latest audit entry that " +
    'records one (SHA-256 over the trace’s `contentSalt` and the RFC 8785 canonical JSON of `{inputContext, ' +
    'outputDecision, metadata, rationale}`), in one streamed pass whatever `full` says, and adds `contentChecked`, ' +
    '`contentAltered` (with up to 20 `contentAlteredIds`), `contentErased` and `contentUnhashed`. An altered ' +
    'trace leaves the chain valid: its content lies outside the chain, its hash inside.',
  listCheckpoints:
    'Newest first. Owner or admin. limit default 50, max 200. Each is the chain head at a time, signed with ' +
    'Ed25519 (GET /audit/public-key); keep copies outside the operator (the `audit.checkpoint` webhook event) to ' +
    'prove later that the chain was neither rewritten nor cut.',
  createCheckpoint:
    'Owner or admin. Verifies the chain up to its head (from the last verified prefix) and signs that head; a ' +
    'head already signed answers its checkpoint. A new checkpoint is also sent as the `audit.checkpoint` event. ' +
    '409 AUDIT_CHAIN_INVALID when the chain does not verify.',
  export: 'One audit entry per line in sequence order, streamed, for offline verification.',
  get: 'Entries of another organization answer 404.',
  publicKey:
    'Public. Every Ed25519 key the service has signed checkpoints with, the current one and those before a ' +
    "rotation, as PEM and JWK. `keyId` is the key's RFC 7638 thumbprint.",
} as const;

/** The codes of each route's error statuses, where they differ from the generic ones. */
export const AUDIT_ERRORS = {
  chainLimited: AUDIT_CHAIN_LIMITED,
  createCheckpoint: { 409: 'AUDIT_CHAIN_INVALID (the chain does not verify)', ...AUDIT_CHAIN_LIMITED },
} as const;

/** The export's answer: the chain as NDJSON, outside the envelope. */
export const AUDIT_EXPORT_RESPONSES: readonly ApiResponseOptions[] = [
  {
    status: 200,
    description: 'NDJSON stream of audit entries',
    content: { 'application/x-ndjson': { schema: { type: 'string' } } },
  },
];
