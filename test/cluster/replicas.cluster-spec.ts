import { readdirSync } from 'node:fs';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, startCluster } from '../../tools/cluster/cluster.mjs';
import {
  addMember,
  call,
  createAgent,
  databaseOf,
  login,
  metricSum,
  onEveryReplica,
  register,
  throughProxy,
  traceBody,
} from './support.js';

const ROUTE = '/api/v1/auth/me';

/**
 * Three API processes (WORKERS=off) and a worker behind HAProxy, started at the same moment on an empty database:
 * the migrations run once, the API processes serve everything and run no job, and whatever revokes access on one
 * replica is refused by every replica on the next request (each replica caches sessions, memberships and keys, and
 * hears the others' invalidations over LISTEN/NOTIFY).
 */
describe('a cluster of three API replicas and a worker', () => {
  let cluster: Cluster;
  let db: pg.Pool;
  beforeAll(async () => {
    cluster = await startCluster();
    db = databaseOf(cluster);
  });
  afterAll(async () => {
    await db?.end();
    await cluster?.stop();
  });

  it('ran every migration once, though four processes started on the empty database at the same moment', async () => {
    const files = readdirSync(new URL('../../drizzle', import.meta.url)).filter((f) => f.endsWith('.sql'));
    const { rows } = await db.query<{ hash: string; n: string }>(
      'select hash, count(*) as n from drizzle.__drizzle_migrations group by hash',
    );
    expect(rows).toHaveLength(files.length);
    expect(rows.every((r) => Number(r.n) === 1)).toBe(true);
    for (const replica of cluster.replicas) {
      const res = await call(replica.base!, 'GET', '/health/ready');
      expect(res.status).toBe(200);
      expect(res.body.data.checks).toEqual({ database: 'up', migrations: 'current', draining: false });
    }
  });

  it('spreads requests over the three replicas, which serve everything while only the worker runs jobs', async () => {
    const owner = await register(cluster.base, 'Spread');
    const agent = await createAgent(cluster.base, owner.token);
    const traces = await throughProxy(cluster, 6, 'POST', '/api/v1/traces', {
      apiKey: agent.key,
      body: traceBody(1),
    });
    expect(traces.statuses.every((s) => s === 201)).toBe(true);
    expect([...traces.servedBy].sort()).toEqual(['api-1', 'api-2', 'api-3']);
    const reads = await throughProxy(cluster, 3, 'GET', '/api/v1/traces?limit=50', { token: owner.token });
    expect(reads.statuses).toEqual([200, 200, 200]);
    expect([...reads.servedBy].sort()).toEqual(['api-1', 'api-2', 'api-3']);

    for (const replica of cluster.replicas) {
      // WORKERS=off: no job is scheduled there, so no job counter exists.
      expect(metricSum(await replica.metrics(), 'governance_job_runs_total')).toBe(0);
      expect(await replica.metrics()).not.toMatch(/^governance_job_runs_total\{/m);
    }
    const worker = await cluster.workers[0]!.metrics();
    expect(worker).toMatch(/^governance_job_runs_total\{job_name="outbox"/m);
  });

  describe('revocation on one replica is refused by every replica on the next request', () => {
    it('a session revoked through one replica', async () => {
      const owner = await register(cluster.base, 'Sessions');
      const token = await login(cluster.base, owner.email);
      // Every replica has served the session (and cached what it caches of it).
      expect(await onEveryReplica(cluster, 'GET', ROUTE, { token })).toEqual([200, 200, 200]);
      const revoked = await call(cluster.replicas[0]!.base!, 'POST', '/api/v1/auth/revoke-sessions', {
        token,
      });
      expect(revoked.status).toBe(200);
      expect(await onEveryReplica(cluster, 'GET', ROUTE, { token })).toEqual([401, 401, 401]);
      const proxied = await throughProxy(cluster, 6, 'GET', ROUTE, { token });
      expect(proxied.statuses).toEqual([401, 401, 401, 401, 401, 401]);
      expect(proxied.servedBy.size).toBe(3);
    });

    it('a member suspended through one replica', async () => {
      const owner = await register(cluster.base, 'Suspension');
      const member = await addMember(cluster, db, owner.orgId, 'member');
      expect(await onEveryReplica(cluster, 'GET', ROUTE, { token: member.token })).toEqual([200, 200, 200]);
      const suspended = await call(
        cluster.replicas[1]!.base!,
        'PATCH',
        `/api/v1/team/members/${member.userId}/status`,
        { token: owner.token, body: { isActive: false } },
      );
      expect(suspended.status, JSON.stringify(suspended.body)).toBe(200);
      const after = await onEveryReplica(cluster, 'GET', '/api/v1/traces', { token: member.token });
      expect(
        after.every((s) => s === 401 || s === 403),
        String(after),
      ).toBe(true);
      const proxied = await throughProxy(cluster, 6, 'GET', '/api/v1/traces', { token: member.token });
      expect(proxied.statuses.every((s) => s === 401 || s === 403)).toBe(true);
    });

    it("an agent's key replaced, and a workspace key deleted, through one replica", async () => {
      const owner = await register(cluster.base, 'Keys');
      const agent = await createAgent(cluster.base, owner.token);
      const workspace = await call(cluster.base, 'POST', '/api/v1/auth/keys', {
        token: owner.token,
        body: { name: 'Reader' },
      });
      expect(workspace.status).toBe(201);
      const workspaceKey: string = workspace.body.data.key;
      const trace = { apiKey: agent.key, body: traceBody(2) };
      expect(await onEveryReplica(cluster, 'POST', '/api/v1/traces', trace)).toEqual([201, 201, 201]);
      expect(await onEveryReplica(cluster, 'GET', '/api/v1/traces', { apiKey: workspaceKey })).toEqual([
        200, 200, 200,
      ]);

      const regenerated = await call(
        cluster.replicas[2]!.base!,
        'POST',
        `/api/v1/agents/${agent.id}/regenerate-key`,
        {
          token: owner.token,
        },
      );
      expect(regenerated.status).toBe(200);
      const deleted = await call(
        cluster.replicas[0]!.base!,
        'DELETE',
        `/api/v1/auth/keys/${workspace.body.data.id}`,
        {
          token: owner.token,
        },
      );
      expect(deleted.status).toBe(200);

      expect(await onEveryReplica(cluster, 'POST', '/api/v1/traces', trace)).toEqual([401, 401, 401]);
      expect(await onEveryReplica(cluster, 'GET', '/api/v1/traces', { apiKey: workspaceKey })).toEqual([
        401, 401, 401,
      ]);
      const fresh = { apiKey: regenerated.body.data.apiKey as string, body: traceBody(3) };
      expect(await onEveryReplica(cluster, 'POST', '/api/v1/traces', fresh)).toEqual([201, 201, 201]);
    });

    it('an organization deleted through one replica: its sessions and keys', async () => {
      const owner = await register(cluster.base, 'Deleted Org');
      const agent = await createAgent(cluster.base, owner.token);
      const trace = { apiKey: agent.key, body: traceBody(4) };
      expect(await onEveryReplica(cluster, 'POST', '/api/v1/traces', trace)).toEqual([201, 201, 201]);
      expect(await onEveryReplica(cluster, 'GET', '/api/v1/traces', { token: owner.token })).toEqual([
        200, 200, 200,
      ]);
      const deleted = await call(cluster.replicas[1]!.base!, 'DELETE', '/api/v1/organizations/current', {
        token: owner.token,
        body: { confirmName: owner.organizationName },
      });
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(202);
      expect(await onEveryReplica(cluster, 'POST', '/api/v1/traces', trace)).toEqual([401, 401, 401]);
      const reads = await onEveryReplica(cluster, 'GET', '/api/v1/traces', { token: owner.token });
      expect(
        reads.every((s) => s === 401 || s === 403),
        String(reads),
      ).toBe(true);
    });
  });
});
