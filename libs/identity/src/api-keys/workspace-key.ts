import { randomBytes } from 'node:crypto';
import { sha256Hex } from '#platform';

export const WORKSPACE_KEY_PREFIX = 'svc_live_';

/** Characters of the random part kept as the displayed prefix (72 of 256 bits; the rest stays secret). */
const DISPLAYED_RANDOM_CHARS = 12;

/** `svc_live_` followed by 32 random bytes in base64url: 43 characters, no padding. */
const WELL_FORMED = /^svc_live_[A-Za-z0-9_-]{43}$/;

export interface MintedWorkspaceKey {
  /** The plaintext key: returned to the caller once, never stored. */
  key: string;
  /** What listings show: `svc_live_` and the first characters of the random part. */
  prefix: string;
  /** SHA-256 hex of the key, the only form stored. */
  keyHash: string;
}

export function mintWorkspaceKey(): MintedWorkspaceKey {
  const key = WORKSPACE_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, prefix: displayedPrefix(key), keyHash: sha256Hex(key) };
}

export function displayedPrefix(key: string): string {
  return key.slice(0, WORKSPACE_KEY_PREFIX.length + DISPLAYED_RANDOM_CHARS);
}

/** Shape check before any database work: anything else cannot be a key this service minted. */
export function isWellFormedWorkspaceKey(key: string): boolean {
  return WELL_FORMED.test(key);
}
