import { randomBytes } from 'node:crypto';
import { sha256Hex } from '#platform';

export const AGENT_KEY_PREFIX = 'svc_agent_';
const DISPLAYED_RANDOM_CHARS = 12;
const WELL_FORMED = /^svc_agent_[A-Za-z0-9_-]{43}$/;

export interface MintedAgentKey {
  key: string;
  prefix: string;
  keyHash: string;
}

/** `svc_agent_` + 32 random bytes (base64url). Only the SHA-256 is stored; the prefix is what listings show. */
export function mintAgentKey(): MintedAgentKey {
  const key = AGENT_KEY_PREFIX + randomBytes(32).toString('base64url');
  return {
    key,
    prefix: key.slice(0, AGENT_KEY_PREFIX.length + DISPLAYED_RANDOM_CHARS),
    keyHash: sha256Hex(key),
  };
}

export function isWellFormedAgentKey(key: string): boolean {
  return WELL_FORMED.test(key);
}
