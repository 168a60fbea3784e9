import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson, safeEqual } from '#platform';

/**
 * A trace's content: everything a client sent about the decision, as stored. Its hash lies in the trace's audit
 * entry (`metadata.contentHash`), so that rewriting the content in the database no longer leaves the chain valid.
 */
export interface TraceContent {
  inputContext: Record<string, unknown> | null;
  outputDecision: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  rationale: string | null;
}

/** What checking a trace's stored content against its audit entry finds (`GET /traces/:id/verify`). */
export const CONTENT_STATUSES = ['intact', 'altered', 'erased', 'unhashed'] as const;
export type ContentStatus = (typeof CONTENT_STATUSES)[number];

/** Bytes of a trace's content salt (stored as 32 hex). */
const SALT_BYTES = 16;

/** Random bytes drawn 4 KiB at a time: one call into the system's generator per 256 salts, not per trace. */
let pool = Buffer.alloc(0);
let taken = 0;

export function newContentSalt(): string {
  if (taken + SALT_BYTES > pool.length) {
    pool = randomBytes(4096);
    taken = 0;
  }
  taken += SALT_BYTES;
  return pool.toString('hex', taken - SALT_BYTES, taken);
}

/** The four fields hashed, and nothing else (`id`, status and policies are in the entry itself). */
export const contentOf = (trace: TraceContent): TraceContent => ({
  inputContext: trace.inputContext,
  outputDecision: trace.outputDecision,
  metadata: trace.metadata,
  rationale: trace.rationale,
});

/**
 * SHA-256, in hex, over the salt's 16 bytes followed by the UTF-8 of the content's RFC 8785 canonical form. The
 * salt is random per trace: without it the hash cannot be tested against a guessed content, so erasing the salt
 * leaves a hash that links to nothing. packages/audit-verify computes the same (its `trace-content.mjs`).
 */
export function contentHashOf(salt: string, trace: TraceContent): string {
  return createHash('sha256')
    .update(Buffer.from(salt, 'hex'))
    .update(canonicalOf(contentOf(trace)), 'utf8')
    .digest('hex');
}

/**
 * The canonical form of the content as the database stores it: a number JSON cannot hold (`1e400` parses to
 * Infinity) is stored as `null`, as JSON.stringify writes it, so it is hashed as `null` too.
 */
function canonicalOf(content: TraceContent): string {
  try {
    return canonicalJson(content);
  } catch {
    return canonicalJson(JSON.parse(JSON.stringify(content)));
  }
}

/**
 * A stored trace against the latest content hash its audit entries record: `unhashed` when none does (stored
 * before content hashing), `erased` once its subject's content was erased, else `intact` or `altered`.
 */
export function contentStatusOf(
  trace: TraceContent & { contentSalt: string | null; erasedAt: Date | null },
  recordedHash: string | null | undefined,
): ContentStatus {
  if (trace.erasedAt) return 'erased';
  if (!recordedHash) return 'unhashed';
  if (!trace.contentSalt) return 'altered';
  return safeEqual(contentHashOf(trace.contentSalt, trace), recordedHash) ? 'intact' : 'altered';
}

/** The audit entry that decides a trace's content: the latest of its entries that records a content hash. */
export interface RecordedContent {
  id: string;
  hash: string;
}

/**
 * The one rule of the service's content checks, per trace (GET /traces/:id/verify) and in bulk
 * (GET /audit/verify?content=true): the stored trace against `recorded`, the latest entry of the chain that records
 * its content hash (its ingestion, or a later CPI verdict). Beyond `contentStatusOf`, the trace must point at that
 * entry (`content_entry_id`): a pointer moved back to an earlier entry, with the content rolled back to match it, is
 * a rewritten record. A trace with a salt or a pointer but no recorded hash was rewritten too (only a trace stored
 * before content hashing has neither).
 */
export function decideContent(
  trace: TraceContent & { contentSalt: string | null; contentEntryId: string | null; erasedAt: Date | null },
  recorded: RecordedContent | null,
): ContentStatus {
  if (trace.erasedAt) return 'erased';
  if (!recorded) return trace.contentSalt !== null || trace.contentEntryId !== null ? 'altered' : 'unhashed';
  const status = contentStatusOf(trace, recorded.hash);
  return status === 'intact' && trace.contentEntryId !== recorded.id ? 'altered' : status;
}
