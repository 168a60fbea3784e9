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
  failures: string[];
}

export function canonicalJson(value: unknown): string;

export const GENESIS_HASH: string;
export const HASHED_FIELDS: readonly string[];
export function hashedContent(entry: Record<string, unknown>): Record<string, unknown>;
export function entryHash(prevHash: string, entry: Record<string, unknown>): string;

export const BREAK_REASONS: readonly BreakReason[];
export class ChainVerifier {
  constructor(options?: { watch?: Iterable<number> });
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
export function verifyAuditLines(
  lines: AsyncIterable<string> | Iterable<string>,
  loaded: LoadedCheckpoints,
  options?: { exportSource?: string },
): Promise<Report>;
export function verifyAuditFiles(paths: {
  exportPath: string;
  checkpointPaths?: string[];
  keyPaths?: string[];
}): Promise<Report>;
export function formatReport(report: Report): string[];

export const MAX_DEPTH: number;
export function decimalValue(token: string): string;
export function isCanonicalNumber(token: string): boolean;
export function scanJson(
  text: string,
): { reason: 'duplicate_key' | 'non_canonical_number' | 'malformed_line'; detail: string } | null;
export function printable(text: unknown): string;
