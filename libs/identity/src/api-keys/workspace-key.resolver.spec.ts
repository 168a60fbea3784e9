import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { FixedClock, sha256Hex } from '#platform';
import type { ApiKeysRepository, WorkspaceKeyPrincipal } from './api-keys.repository.js';
import { WorkspaceKeyResolver } from './workspace-key.resolver.js';
import { mintWorkspaceKey } from './workspace-key.js';

const NOW = new Date('2026-04-12T10:00:00.000Z');

function setup(principal: Partial<WorkspaceKeyPrincipal> | undefined, touch = vi.fn(async () => undefined)) {
  const minted = mintWorkspaceKey();
  const row: WorkspaceKeyPrincipal | undefined = principal && {
    id: 'a'.repeat(24),
    organizationId: 'b'.repeat(24),
    keyHash: minted.keyHash,
    scope: { readOnly: false },
    createdBy: 'c'.repeat(24),
    lastUsedAt: null,
    revokedAt: null,
    plan: 'governance',
    ...principal,
  };
  const findPrincipalByHash = vi.fn(async () => row);
  const repo = { findPrincipalByHash, touchLastUsed: touch } as unknown as ApiKeysRepository;
  const clock = new FixedClock(NOW);
  return {
    resolver: new WorkspaceKeyResolver(repo, clock),
    key: minted.key,
    findPrincipalByHash,
    touch,
    clock,
  };
}

describe('WorkspaceKeyResolver', () => {
  it('looks the key up by its SHA-256 and returns the workspace-key actor', async () => {
    const { resolver, key, findPrincipalByHash } = setup({
      scope: { agentIds: ['d'.repeat(24)], readOnly: true },
    });
    expect(resolver.prefix).toBe('svc_live_');
    await expect(resolver.resolveKey(key)).resolves.toEqual({
      type: 'api_key',
      credential: 'workspaceKey',
      organizationId: 'b'.repeat(24),
      plan: 'governance',
      userId: 'c'.repeat(24),
      email: null,
      role: null,
      keyId: 'a'.repeat(24),
      scope: { agentIds: ['d'.repeat(24)], readOnly: true },
    });
    expect(findPrincipalByHash).toHaveBeenCalledWith(sha256Hex(key));
  });

  it('refuses a revoked key and an unknown key', async () => {
    const revoked = setup({ revokedAt: new Date(NOW.getTime() - 1) });
    await expect(revoked.resolver.resolveKey(revoked.key)).resolves.toBeNull();
    expect(revoked.touch).not.toHaveBeenCalled();
    const unknown = setup(undefined);
    await expect(unknown.resolver.resolveKey(unknown.key)).resolves.toBeNull();
  });

  it('refuses a row whose hash differs from the presented key’s', async () => {
    const { resolver, key } = setup({ keyHash: sha256Hex('something else') });
    await expect(resolver.resolveKey(key)).resolves.toBeNull();
  });

  it('does not query the database for a malformed key', async () => {
    const { resolver, findPrincipalByHash } = setup({});
    await expect(resolver.resolveKey('svc_live_short')).resolves.toBeNull();
    expect(findPrincipalByHash).not.toHaveBeenCalled();
  });

  it('records a use when the last one is a minute old or more, not sooner', async () => {
    const fresh = setup({ lastUsedAt: new Date(NOW.getTime() - 59_999) });
    await fresh.resolver.resolveKey(fresh.key);
    expect(fresh.touch).not.toHaveBeenCalled();

    const stale = setup({ lastUsedAt: new Date(NOW.getTime() - 60_000) });
    await stale.resolver.resolveKey(stale.key);
    expect(stale.touch).toHaveBeenCalledWith(
      'b'.repeat(24),
      'a'.repeat(24),
      NOW,
      new Date(NOW.getTime() - 60_000),
    );
  });

  it('issues one write for a burst of requests and does not wait for it', async () => {
    let release: () => void = () => undefined;
    const touch = vi.fn(() => new Promise<undefined>((resolve) => (release = () => resolve(undefined))));
    const { resolver, key } = setup({}, touch);
    const actors = await Promise.all([
      resolver.resolveKey(key),
      resolver.resolveKey(key),
      resolver.resolveKey(key),
    ]);
    expect(actors.every((a) => a?.keyId === 'a'.repeat(24))).toBe(true);
    expect(touch).toHaveBeenCalledTimes(1);
    release();
    await new Promise((r) => setImmediate(r));
    await resolver.resolveKey(key);
    expect(touch).toHaveBeenCalledTimes(2);
  });

  it('still authenticates when recording the use fails', async () => {
    const touch = vi.fn(async () => {
      throw new Error('connection lost');
    });
    const warn = vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { resolver, key } = setup({}, touch);
    await expect(resolver.resolveKey(key)).resolves.toMatchObject({ credential: 'workspaceKey' });
    await new Promise((r) => setImmediate(r));
    expect(touch).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      { keyId: 'a'.repeat(24), error: 'connection lost' },
      'Could not record key use',
    );
    warn.mockRestore();
  });
});
