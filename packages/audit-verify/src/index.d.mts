import type { KeyObject } from 'node:crypto';

export type BreakReason =
  | 'malformed_line'
  | 'duplicate_key'
  | 'non_canonical_number'
  | 'sequence_gap'
  | 'organization_mismatch'
  | 'prev_hash_mismatch'
  | 'hash_mismatch';
export type SignatureStatus = 'valid' | 'bad_signature' | 'unknown_key';
export type Containment = 'contained' | 'rewritten' | 'beyond_export' | 'missing' | 'not_checked';
/** A trace's content against the latest content hash the export records for it. */
export type ContentStatus = 'intact' | 'altered' | 'erased' | 'unhashed';

export interface Checkpoint {
  id?: string;
  organizationId: string;
  sequence: number;
  hash: string;
  createdAt: string;
  keyId: string;
  signature: string;
}

export interface PublishedKey {
  keyId?: string;
  algorithm?: 'Ed25519';
  publicKeyPem?: string;
  jwk?: { kty: 'OKP'; crv: 'Ed25519'; x: string };
  createdAt?: string;
}

export interface LoadedKey {
  keyId: string | null;
  thumbprint: string | null;
  status: 'ok' | 'thumbprint_mismatch' | 'invalid';
  detail?: string;
  source: string;
  createdAt: string | null;
  publicKey?: KeyObject;
}

export interface ChainBreak {
  line: number;
  sequence: number | null;
  id: unknown;
  reason: BreakReason;
  detail: string;
}

export interface ChainResult {
  valid: boolean;
  lines: number;
  entries: number;
  organizationId: string | null;
  firstSequence: number | null;
  lastSequence: number | null;
  head: string | null;
  headSequence: number | null;
  brokenAt: ChainBreak | null;
}

export interface CheckpointResult {
  id: string | null;
  organizationId: string;
  sequence: number;
  hash: string;
  createdAt: string;
  keyId: string;
  source: string;
  signature: SignatureStatus;
  sameOrganization: boolean | null;
  containment: Containment;
  exportHash: unknown;
  ok: boolean;
}

/** A trace as GET /traces/:id shows it: what the content check reads of it. */
export interface TraceInput {
  id: string;
  organizationId?: string;
  inputContext: Record<string, unknown> | null;
  outputDecision: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  rationale: string | null;
  /** 32 hex digits; null for a trace stored before content hashing, and once erased. */
  contentSalt: string | null;
  erasedAt?: string | null;
  [member: string]: unknown;
}

/** A trace reduced to what the check needs: its content hash, computed when loaded. */
export interface LoadedTrace {
  id: string;
  organizationId: string | null;
  erasedAt: string | null;
  hasSalt: boolean;
  /** null when the trace has no usable salt (`saltProblem` says why). */
  computedHash: string | null;
  saltProblem: string | null;
  source: string;
  /** The line of an NDJSON traces file; null for a JSON document. */
  line: number | null;
}

export interface TraceResult {
  id: string;
  source: string;
  line: number | null;
  organizationId: string | null;
  status: ContentStatus;
  detail: string;
  computedHash: string | null;
  /** The content hash of the latest entry that targets the trace and records one; null when none does. */
  recordedHash: string | null;
  entrySequence: number | null;
  entryId: unknown;
  entryEventType: unknown;
  /** Entries of the export that target the trace. */
  entries: number;
  /** Whether the entry of `recordedHash` lies within the verified chain; null without such an entry. */
  inVerifiedChain: boolean | null;
  /** Whether the trace's organization is the export's; null when either is unknown. */
  sameOrganization: boolean | null;
  ok: boolean;
}

export interface Report {
  ok: boolean;
  verdict: string;
  export: {
    file: string | null;
    lines: number;
    entries: number;
    organizationId: string | null;
    firstSequence: number | null;
    lastSequence: number | null;
  };
  chain: { valid: boolean; head: string | null; headSequence: number | null; brokenAt: ChainBreak | null };
  keys: Omit<LoadedKey, 'publicKey'>[];
  checkpoints: CheckpointResult[];
  truncation: { truncated: boolean; exportEndsAt: number; latestCheckpointSequence: number | null };
  /** The traces given (`--trace`), in order; empty when none. */
  traces: TraceResult[];
  failures: string[];
}

export function canonicalJson(value: unknown): string;

export const GENESIS_HASH: string;
export const HASHED_FIELDS: readonly string[];
export function hashedContent(entry: Record<string, unknown>): Record<string, unknown>;
export function entryHash(prevHash: string, entry: Record<string, unknown>): string;

export const BREAK_REASONS: readonly BreakReason[];
export class ChainVerifier {
  constructor(options?: {
    watch?: Iterable<number>;
    /** Called with each line parsed as a JSON object, valid or not (the traces' content check observes them). */
    onEntry?: ((entry: Record<string, unknown>) => void) | null;
  });
  push(line: string): void;
  hashAt(sequence: number): { hash: unknown; line: number; id: unknown } | undefined;
  result(): ChainResult;
}

export function checkpointSigningInput(checkpoint: Checkpoint): Buffer;
export function isCheckpoint(value: unknown): value is Checkpoint;
export function parseCheckpointsText(text: string): Checkpoint[];
export function verifyCheckpointSignature(
  checkpoint: Checkpoint,
  keyring: { get(keyId: string): KeyObject | undefined },
): SignatureStatus;

export function jwkThumbprint(x: string): string;
export function loadPublishedKey(published: PublishedKey, source: string): LoadedKey;
export function parseKeysText(text: string): PublishedKey[];
export class Keyring {
  keys: Map<string, KeyObject>;
  entries: LoadedKey[];
  add(published: PublishedKey, source: string): LoadedKey;
  get(keyId: string): KeyObject | undefined;
  readonly rejected: LoadedKey[];
  readonly size: number;
}

export class InputError extends Error {}
export interface LoadedCheckpoints {
  keyring: Keyring;
  checkpoints: { checkpoint: Checkpoint; source: string; signature: SignatureStatus }[];
  /** Whether checkpoints were asked for: then a report without any checkpoint fails. */
  requested?: boolean;
}
export function loadCheckpoints(input: {
  checkpointTexts?: { source: string; text: string }[];
  keyTexts?: { source: string; text: string }[];
}): LoadedCheckpoints;
export function loadTraces(input: { traceTexts?: { source: string; text: string }[] }): TraceContentCheck;
export function verifyAuditLines(
  lines: AsyncIterable<string> | Iterable<string>,
  loaded: LoadedCheckpoints,
  options?: { exportSource?: string; traces?: TraceContentCheck },
): Promise<Report>;
export function verifyAuditFiles(paths: {
  exportPath: string;
  checkpointPaths?: string[];
  keyPaths?: string[];
  /** Traces files (`--trace`): see `parseTracesText`. */
  tracePaths?: string[];
}): Promise<Report>;
export function formatReport(report: Report): string[];

export const MAX_DEPTH: number;
export function decimalValue(token: string): string;
export function isCanonicalNumber(token: string): boolean;
export function scanJson(
  text: string,
): { reason: 'duplicate_key' | 'non_canonical_number' | 'malformed_line'; detail: string } | null;
export function printable(text: unknown): string;

export const CONTENT_FIELDS: readonly ['inputContext', 'outputDecision', 'metadata', 'rationale'];
export const CONTENT_STATUSES: readonly ContentStatus[];
/** `{inputContext, outputDecision, metadata, rationale}` of a trace: what its content hash covers. */
export function traceContent(trace: Record<string, unknown>): {
  inputContext: unknown;
  outputDecision: unknown;
  metadata: unknown;
  rationale: unknown;
};
/** hex(SHA-256(the salt's 16 bytes ‖ UTF-8 of the RFC 8785 canonical JSON of `traceContent(trace)`)). */
export function contentHashOf(salt: string, trace: Record<string, unknown>): string;
export function isTrace(value: unknown): value is TraceInput;
/** The traces of a traces file (a JSON document or NDJSON); throws an Error naming the line otherwise. */
export function parseTracesText(text: string): { trace: TraceInput; line: number | null }[];
export function loadTrace(trace: TraceInput, source: string, line?: number | null): LoadedTrace;
export class TraceContentCheck {
  constructor(traces?: LoadedTrace[]);
  readonly traces: LoadedTrace[];
  readonly size: number;
  observe(entry: Record<string, unknown>): void;
  results(chain: { organizationId: string | null; headSequence: number | null }): TraceResult[];
}
