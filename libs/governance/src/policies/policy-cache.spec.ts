import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle, TransactionHost } from '#platform';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { POLICY_CHANGED_CHANNEL, type PoliciesRepository } from './policies.repository.js';
import { CachedPolicySet, type PolicyCacheOptions } from './policy-cache.js';
import type { PolicyRow } from './policy.schema.js';

function row(id: string, organizationId = 'org'): PolicyRow {
  const now = new Date();
  return {
    id,
    organizationId,
    name: id,
    description: null,
    outcome: 'block',
    conditions: [{ field: 'outputDecision.text', operator: 'contains', value: 'x' }],
    match: 'all',
    agentIds: [],
    priority: 100,
    isActive: true,
    templateId: null,
    createdBy: null,
    createdAt: now,
    updatedAt: now,
  };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface Setup {
  handle?: DatabaseHandle;
  options?: Partial<PolicyCacheOptions>;
  rows?: (organizationId: string) => Promise<PolicyRow[]>;
}

function setup({ handle, options, rows }: Setup = {}) {
  const db = handle ?? ({ driver: 'pglite' } as DatabaseHandle);
  const load = vi.fn(
    rows ?? (async (organizationId: string) => [row(`p-${organizationId}`, organizationId)]),
  );
  const committed: (() => unknown)[] = [];
  const repo = { listActiveForEvaluation: load };
  // Statements run in the changing transaction (the NOTIFY on PostgreSQL).
  const execute = vi.fn(async (_query: unknown) => undefined);
  const tx = { afterCommit: (cb: () => unknown) => committed.push(cb), db: { execute } };
  let clock = 0;
  const make = () =>
    new CachedPolicySet(repo as unknown as PoliciesRepository, tx as unknown as TransactionHost, db, {
      now: () => clock,
      ...options,
    });
  const cache = make();
  return {
    cache,
    make,
    load,
    repo,
    execute,
    commit: () => committed.splice(0).forEach((cb) => cb()),
    tick: (ms: number) => (clock += ms),
  };
}

describe('CachedPolicySet', () => {
  it('compiles once per organization and serves the cached set after that', async () => {
    const { cache, load } = setup();
    await cache.start();
    const first = await cache.forOrganization('a');
    expect(first.map((p) => p.id)).toEqual(['p-a']);
    expect(await cache.forOrganization('a')).toBe(first);
    expect(load).toHaveBeenCalledTimes(1);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('shares one load between concurrent misses for the same organization', async () => {
    const gate = deferred<PolicyRow[]>();
    const { cache, load } = setup({ rows: () => gate.promise });
    await cache.start();
    const calls = [cache.forOrganization('a'), cache.forOrganization('a'), cache.forOrganization('a')];
    gate.resolve([row('p1')]);
    const results = await Promise.all(calls);
    expect(load).toHaveBeenCalledTimes(1);
    expect(results[0]).toBe(results[1]);
    expect(results[2]!.map((p) => p.id)).toEqual(['p1']);
  });

  it('drops the least recently used organization beyond the bound', async () => {
    const { cache, load } = setup({ options: { maxEntries: 2 } });
    await cache.start();
    await cache.forOrganization('a');
    await cache.forOrganization('b');
    await cache.forOrganization('a'); // a is now the most recent
    await cache.forOrganization('c'); // evicts b
    expect(cache.size).toBe(2);
    load.mockClear();
    await cache.forOrganization('a');
    expect(load).not.toHaveBeenCalled();
    await cache.forOrganization('b');
    expect(load).toHaveBeenCalledWith('b');
  });

  it('reloads after the TTL', async () => {
    const { cache, load, tick } = setup({ options: { ttlMs: 1000 } });
    await cache.start();
    await cache.forOrganization('a');
    tick(999);
    await cache.forOrganization('a');
    expect(load).toHaveBeenCalledTimes(1);
    tick(1);
    await cache.forOrganization('a');
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('does not keep a load that an invalidation overtook', async () => {
    const gate = deferred<PolicyRow[]>();
    const { cache, load } = setup({ rows: () => gate.promise });
    await cache.start();
    const stale = cache.forOrganization('a');
    cache.invalidate('a');
    gate.resolve([row('old')]);
    expect((await stale).map((p) => p.id)).toEqual(['old']);
    load.mockImplementation(async () => [row('new')]);
    expect((await cache.forOrganization('a')).map((p) => p.id)).toEqual(['new']);
  });

  it('does not cache a failed load', async () => {
    const { cache, load } = setup();
    await cache.start();
    load.mockRejectedValueOnce(new Error('db down'));
    await expect(cache.forOrganization('a')).rejects.toThrow('db down');
    expect((await cache.forOrganization('a')).map((p) => p.id)).toEqual(['p-a']);
  });

  it('invalidates every cache on the same database after commit, not before', async () => {
    const { cache, make, load, commit, execute } = setup();
    const sibling = make();
    await cache.start();
    await sibling.start();
    await cache.forOrganization('a');
    await sibling.forOrganization('a');
    await sibling.forOrganization('b');
    load.mockClear();

    await cache.announceChange('a');
    expect(execute).not.toHaveBeenCalled(); // PGlite: in-process only
    await sibling.forOrganization('a');
    expect(load).not.toHaveBeenCalled();

    commit();
    await cache.forOrganization('a');
    await sibling.forOrganization('a');
    await sibling.forOrganization('b');
    expect(load.mock.calls).toEqual([['a'], ['a']]);
    await sibling.stop();
  });

  it('on PostgreSQL, notifies inside the transaction and reads through while no listener is connected', async () => {
    const newClient = vi.fn(() =>
      Object.assign(new EventEmitter(), {
        connect: () => Promise.reject(new Error('connection refused')),
        end: () => Promise.resolve(),
      }),
    );
    const handle = { driver: 'postgres', newClient } as unknown as DatabaseHandle;
    const { cache, load, execute } = setup({ handle, options: { reconnectMinMs: 60_000 } });
    await cache.start();
    expect(newClient).toHaveBeenCalledTimes(1);
    await cache.announceChange('a');
    expect(execute).toHaveBeenCalledTimes(1);
    const notify = new PgDialect().sqlToQuery(execute.mock.calls[0]![0] as SQL);
    expect(notify).toMatchObject({ sql: 'select pg_notify($1, $2)', params: [POLICY_CHANGED_CHANNEL, 'a'] });
    await cache.forOrganization('a');
    await cache.forOrganization('a');
    expect(load).toHaveBeenCalledTimes(2);
    await cache.stop();
  });
});
