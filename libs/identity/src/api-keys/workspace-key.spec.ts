import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { displayedPrefix, isWellFormedWorkspaceKey, mintWorkspaceKey } from './workspace-key.js';

describe('workspace key minting', () => {
  it('mints svc_live_ and 32 random bytes in base64url, with its displayed prefix and SHA-256', () => {
    const minted = mintWorkspaceKey();
    expect(minted.key).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(minted.key.slice('svc_live_'.length), 'base64url')).toHaveLength(32);
    expect(minted.prefix).toBe(minted.key.slice(0, 21));
    expect(minted.keyHash).toBe(createHash('sha256').update(minted.key).digest('hex'));
  });

  it('never mints the same key twice in a thousand draws', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => mintWorkspaceKey().key));
    expect(keys.size).toBe(1000);
  });

  it('shows only the first 12 characters of the random part', () => {
    expect(displayedPrefix('svc_live_ABCDEFGHIJKLmnopqrstuvwxyz')).toBe('svc_live_ABCDEFGHIJKL');
  });

  it.each([
    ['svc_live_unknown', false],
    ['svc_live_' + 'A'.repeat(42), false],
    ['svc_live_' + 'A'.repeat(44), false],
    ['svc_live_' + 'A'.repeat(42) + '=', false],
    ['svc_agent_' + 'A'.repeat(43), false],
    [' svc_live_' + 'A'.repeat(43), false],
    ['svc_live_' + 'Az09_-'.repeat(7) + 'x', true],
  ])('treats %s as well-formed: %s', (key, expected) => {
    expect(isWellFormedWorkspaceKey(key)).toBe(expected);
  });
});
