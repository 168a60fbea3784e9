import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntryRow } from '#platform';
import { type Registered, TEST_PASSWORD, TestContext, uniqueEmail } from './support/app.js';
import { appendEntry, appendMany, type AuditEntry, auditEntriesOf } from './support/audit-entries.js';

// An independent RFC 8785 implementation (CommonJS; its typings declare an ES default export).
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string;

const AUDIT = '/api/v1/audit';
const GENESIS = '0'.repeat(64);

/** The chain's hash (docs/compliance-officers.md, "Audit log"), recomputed independently of the production helper. */
function offlineHash(entry: AuditEntry): string {
  const { id: _id, prevHash, hash: _hash, ...content } = entry;
  return createHash('sha256')
    .update(`${prevHash}\n${canonicalize(content)}`)
    .digest('hex');
}

function sequences(entries: { sequence: number }[]): number[] {
  return entries.map((e) => e.sequence);
}

function range(from: number, to: number): number[] {
  const step = from <= to ? 1 : -1;
  return Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => from + i * step);
}

function expectError(res: LightMyRequestResponse, status: number, code: string): void {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toMatchObject({ success: false, code });
}

describe('audit log', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: '2025-03-01T09:00:00.000Z' });
  });
  afterAll(async () => ctx?.close());

  async function exportLines(token: string): Promise<AuditEntry[]> {
    const res = await ctx.get(`${AUDIT}/export`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.body
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as AuditEntry);
  }

  async function verify(token: string, full = false) {
    const res = await ctx.get(`${AUDIT}/verify${full ? '?full=true' : ''}`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  }

  describe('GET /audit', () => {
    let owner: Registered;
    const TOTAL = 210;

    beforeAll(async () => {
      owner = await ctx.register();
      await appendMany(ctx, owner.organization.id, TOTAL - 1, { concurrency: 10 });
    });

    it('lists newest first, 50 per page by default, with page, limit, total and totalPages', async () => {
      const res = await ctx.get(AUDIT, { token: owner.token });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.success).toBe(true);
      expect(body.pagination).toEqual({ page: 1, limit: 50, total: TOTAL, totalPages: 5 });
      expect(sequences(body.data)).toEqual(range(TOTAL, TOTAL - 49));
      expect(body.data.every((e: AuditEntry) => e.organizationId === owner.organization.id)).toBe(true);
    });

    it('returns the requested page of the requested size', async () => {
      const res = await ctx.get(AUDIT, { token: owner.token, query: { page: '2', limit: '20' } });
      expect(res.statusCode).toBe(200);
      expect(res.json().pagination).toEqual({ page: 2, limit: 20, total: TOTAL, totalPages: 11 });
      expect(sequences(res.json().data)).toEqual(range(TOTAL - 20, TOTAL - 39));
    });

    it('clamps limit=500 to the maximum of 200', async () => {
      const res = await ctx.get(AUDIT, { token: owner.token, query: { limit: '500' } });
      expect(res.statusCode).toBe(200);
      expect(res.json().pagination).toEqual({ page: 1, limit: 200, total: TOTAL, totalPages: 2 });
      expect(res.json().data).toHaveLength(200);
    });

    it('returns 400 VALIDATION_ERROR when limit is not a number or below 1', async () => {
      for (const limit of ['abc', '0', '-5']) {
        const res = await ctx.get(AUDIT, { token: owner.token, query: { limit } });
        expectError(res, 400, 'VALIDATION_ERROR');
      }
    });

    it('filters eventType exactly, or by prefix when it ends in *, escaping LIKE wildcards', async () => {
      const org = await ctx.register();
      await ctx.login(org.user.email);
      const orgId = org.organization.id;
      for (const type of [
        'doc.created',
        'doc.created',
        'doc.created_v2',
        'doc.deleted',
        'authz.check',
        'x_y.one',
        'xzy.two',
      ]) {
        await appendEntry(ctx, orgId, type);
      }
      const types = async (eventType: string): Promise<string[]> => {
        const res = await ctx.get(AUDIT, { token: org.token, query: { eventType } });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().pagination.total).toBe(res.json().data.length);
        return res
          .json()
          .data.map((e: AuditEntry) => e.eventType)
          .sort();
      };
      expect(await types('doc.created')).toEqual(['doc.created', 'doc.created']);
      expect(await types('doc.*')).toEqual(['doc.created', 'doc.created', 'doc.created_v2', 'doc.deleted']);
      expect(await types('auth.*')).toEqual(['auth.login', 'auth.register']);
      expect(await types('x_y*')).toEqual(['x_y.one']);
      expect(await types('nothing.here')).toEqual([]);
      expectError(
        await ctx.get(AUDIT, { token: org.token, query: { eventType: 'doc.%' } }),
        400,
        'VALIDATION_ERROR',
      );
    });

    it('filters by userId', async () => {
      const org = await ctx.register();
      const member = await ctx.addMember(org.organization.id, 'member');
      await appendEntry(ctx, org.organization.id, 'doc.created', { userId: member.userId });
      await appendEntry(ctx, org.organization.id, 'doc.created', { userId: org.user.id });
      await appendEntry(ctx, org.organization.id, 'doc.created');

      const res = await ctx.get(AUDIT, { token: org.token, query: { userId: member.userId } });
      expect(res.statusCode).toBe(200);
      const data: AuditEntry[] = res.json().data;
      // the member's login (written by addMember) and the entry attributed to them
      expect(data.map((e) => e.eventType)).toEqual(['doc.created', 'auth.login']);
      expect(data.every((e) => e.userId === member.userId)).toBe(true);
      expect(res.json().pagination.total).toBe(2);
    });

    it('filters by from and to, both inclusive, and rejects from after to with 400', async () => {
      const org = await ctx.register();
      const orgId = org.organization.id;
      const stamps: string[] = [];
      for (let i = 0; i < 4; i++) {
        ctx.clock.advance(60_000);
        stamps.push(
          (await appendEntry(ctx, orgId, 'time.tick', { metadata: { i } })).createdAt.toISOString(),
        );
      }
      const window = async (query: Record<string, string>): Promise<number[]> => {
        const res = await ctx.get(AUDIT, { token: org.token, query: { eventType: 'time.tick', ...query } });
        expect(res.statusCode, res.body).toBe(200);
        return res.json().data.map((e: AuditEntry) => (e.metadata as { i: number }).i);
      };
      expect(await window({ from: stamps[1]!, to: stamps[2]! })).toEqual([2, 1]);
      expect(await window({ from: stamps[2]! })).toEqual([3, 2]);
      expect(await window({ to: stamps[1]! })).toEqual([1, 0]);
      expect(await window({ from: stamps[3]!, to: stamps[3]! })).toEqual([3]);

      const reversed = await ctx.get(AUDIT, {
        token: org.token,
        query: { from: stamps[2]!, to: stamps[1]! },
      });
      expectError(reversed, 400, 'VALIDATION_ERROR');
      expectError(
        await ctx.get(AUDIT, { token: org.token, query: { from: 'yesterday' } }),
        400,
        'VALIDATION_ERROR',
      );
    });
  });

  it('records auth.register, auth.login and auth.logout with the user actor, ip and user agent', async () => {
    const headers = { 'user-agent': 'audit-e2e/1.0 (vitest)' };
    const email = uniqueEmail('auth');
    const reg = await ctx.post('/api/v1/auth/register', {
      body: { name: 'Auth User', email, password: TEST_PASSWORD, organizationName: 'Auth Org' },
      headers,
    });
    expect(reg.statusCode, reg.body).toBe(201);
    const { token: firstToken, user } = reg.json().data;
    const login = await ctx.post('/api/v1/auth/login', { body: { email, password: TEST_PASSWORD }, headers });
    expect(login.statusCode, login.body).toBe(200);
    const logout = await ctx.post('/api/v1/auth/logout', { token: firstToken, headers });
    expect(logout.statusCode, logout.body).toBe(200);

    const res = await ctx.get(AUDIT, { token: login.json().data.token, query: { eventType: 'auth.*' } });
    expect(res.statusCode).toBe(200);
    const [loggedOut, loggedIn, registered] = res.json().data as AuditEntry[];
    expect(res.json().data).toHaveLength(3);
    const actor = { type: 'user', id: user.id, email };
    for (const entry of [registered, loggedIn, loggedOut]) {
      expect(entry).toMatchObject({
        actor,
        userId: user.id,
        ip: '127.0.0.1',
        userAgent: headers['user-agent'],
      });
    }
    expect(registered).toMatchObject({
      eventType: 'auth.register',
      sequence: 1,
      targetType: 'user',
      targetId: user.id,
    });
    expect(loggedIn).toMatchObject({
      eventType: 'auth.login',
      sequence: 2,
      metadata: { method: 'password' },
    });
    expect(loggedOut).toMatchObject({ eventType: 'auth.logout', sequence: 3 });
  });

  it('allows owner and admin, refuses member and viewer with 403 FORBIDDEN and anonymous callers with 401', async () => {
    const owner = await ctx.register();
    const orgId = owner.organization.id;
    const admin = await ctx.addMember(orgId, 'admin');
    const member = await ctx.addMember(orgId, 'member');
    const viewer = await ctx.addMember(orgId, 'viewer');
    for (const path of [AUDIT, `${AUDIT}/verify`, `${AUDIT}/export`]) {
      expect((await ctx.get(path, { token: owner.token })).statusCode).toBe(200);
      expect((await ctx.get(path, { token: admin.token })).statusCode).toBe(200);
      expectError(await ctx.get(path, { token: member.token }), 403, 'FORBIDDEN');
      expectError(await ctx.get(path, { token: viewer.token }), 403, 'FORBIDDEN');
      expectError(await ctx.get(path), 401, 'UNAUTHORIZED');
    }
  });

  it("never shows one organization's entries to another organization", async () => {
    const a = await ctx.register();
    const b = await ctx.register();
    await appendMany(ctx, a.organization.id, 5);
    await appendEntry(ctx, b.organization.id, 'b.only');

    const list = await ctx.get(AUDIT, { token: b.token, query: { limit: '200' } });
    expect(list.statusCode).toBe(200);
    expect(list.json().pagination.total).toBe(2);
    expect(list.json().data.map((e: AuditEntry) => e.organizationId)).toEqual([
      b.organization.id,
      b.organization.id,
    ]);
    const byForeignUser = await ctx.get(AUDIT, { token: b.token, query: { userId: a.user.id } });
    expect(byForeignUser.json().pagination.total).toBe(0);

    expect(await verify(b.token)).toMatchObject({ valid: true, totalEntries: 2 });
    expect(await verify(a.token)).toMatchObject({ valid: true, totalEntries: 6 });
    const lines = await exportLines(b.token);
    expect(lines.map((l) => [l.organizationId, l.sequence])).toEqual([
      [b.organization.id, 1],
      [b.organization.id, 2],
    ]);
  });

  it('verifies an untouched chain with its entry count and first and last timestamps', async () => {
    const org = await ctx.register();
    for (let i = 0; i < 3; i++) {
      ctx.clock.advance(1_500);
      await appendEntry(ctx, org.organization.id, 'doc.created', { metadata: { i } });
    }
    const rows = await auditEntriesOf(ctx, org.organization.id);
    expect(rows).toHaveLength(4);
    expect(await verify(org.token)).toEqual({
      valid: true,
      totalEntries: 4,
      firstEntry: rows[0]!.createdAt.toISOString(),
      lastEntry: rows[3]!.createdAt.toISOString(),
      verifiedFrom: 1,
    });
  });

  describe('tampering', () => {
    async function chainOfFour(): Promise<{ org: Registered; rows: AuditEntryRow[] }> {
      const org = await ctx.register();
      for (let i = 0; i < 3; i++) {
        ctx.clock.advance(1_000);
        await appendEntry(ctx, org.organization.id, 'doc.created', { metadata: { i } });
      }
      return { org, rows: await auditEntriesOf(ctx, org.organization.id) };
    }

    it('reports hash_mismatch at the row whose content was altered', async () => {
      const { org, rows } = await chainOfFour();
      await ctx.db.db.execute(
        sql`update audit_entries set metadata = '{"x":1}' where organization_id = ${org.organization.id} and sequence = 2`,
      );
      expect(await verify(org.token)).toEqual({
        valid: false,
        totalEntries: 4,
        firstEntry: rows[0]!.createdAt.toISOString(),
        lastEntry: rows[3]!.createdAt.toISOString(),
        verifiedFrom: 1,
        brokenAt: { sequence: 2, id: rows[1]!.id, reason: 'hash_mismatch' },
      });
    });

    it('reports sequence_gap at the first entry after a deleted middle row', async () => {
      const { org, rows } = await chainOfFour();
      await ctx.db.db.execute(
        sql`delete from audit_entries where organization_id = ${org.organization.id} and sequence = 2`,
      );
      const result = await verify(org.token);
      expect(result).toMatchObject({
        valid: false,
        totalEntries: 3,
        lastEntry: rows[3]!.createdAt.toISOString(),
      });
      // brokenAt names one stored entry: the first whose sequence is not the expected one
      expect(result.brokenAt).toEqual({ sequence: 3, id: rows[2]!.id, reason: 'sequence_gap' });
    });

    it('reports prev_hash_mismatch when a row no longer links to its predecessor', async () => {
      const { org, rows } = await chainOfFour();
      await ctx.db.db.execute(
        sql`update audit_entries set prev_hash = ${'f'.repeat(64)} where organization_id = ${org.organization.id} and sequence = 2`,
      );
      expect((await verify(org.token)).brokenAt).toEqual({
        sequence: 2,
        id: rows[1]!.id,
        reason: 'prev_hash_mismatch',
      });
    });

    it('reports hash_mismatch at the last row when its event type was rewritten', async () => {
      const { org, rows } = await chainOfFour();
      await ctx.db.db.execute(
        sql`update audit_entries set event_type = 'doc.deleted' where organization_id = ${org.organization.id} and sequence = 4`,
      );
      expect((await verify(org.token)).brokenAt).toEqual({
        sequence: 4,
        id: rows[3]!.id,
        reason: 'hash_mismatch',
      });
    });
  });

  it('keeps every chain gapless and valid under 200 concurrent appends over 3 organizations and concurrent logins', async () => {
    const orgs = [await ctx.register(), await ctx.register(), await ctx.register()];
    const appends = Array.from({ length: 200 }, (_, i) =>
      appendEntry(ctx, orgs[i % 3]!.organization.id, 'load.append', { metadata: { i } }),
    );
    const logins = orgs.flatMap((o) => Array.from({ length: 3 }, () => ctx.login(o.user.email)));
    await Promise.all([...appends, ...logins]);

    for (const [index, org] of orgs.entries()) {
      const expected = 1 + 3 + Math.ceil((200 - index) / 3);
      const rows = await auditEntriesOf(ctx, org.organization.id);
      expect(sequences(rows)).toEqual(range(1, expected));
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.prevHash).toBe(rows[i - 1]!.hash);
      expect(await verify(org.token)).toMatchObject({ valid: true, totalEntries: expected });
    }
  });

  it('exports NDJSON in sequence order whose hashes recompute offline and chain from the genesis hash', async () => {
    const org = await ctx.register({ name: 'Zoë Ünïcode' });
    await appendEntry(ctx, org.organization.id, 'doc.created', {
      actor: { type: 'user', id: org.user.id, email: org.user.email },
      targetType: 'document',
      targetId: 'doc-1',
      metadata: { z: 1, a: [true, null, 0.1, 1e21, 'ü€😀'], nested: { b: 'x', a: 'y' }, nul: 'a\u0000b' },
      meta: { ip: '203.0.113.9', userAgent: 'agent/2.0' },
    });
    ctx.clock.advance(1_000);
    await appendEntry(ctx, org.organization.id, 'doc.deleted', { metadata: {} });

    const res = await ctx.get(`${AUDIT}/export`, { token: org.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="[^"]+\.ndjson"$/);
    expect(res.body.endsWith('\n')).toBe(true);
    const lines = res.body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditEntry);
    expect(sequences(lines)).toEqual([1, 2, 3]);
    expect(lines.map((l) => l.eventType)).toEqual(['auth.register', 'doc.created', 'doc.deleted']);
    expect(lines[1]!.metadata).toEqual({
      z: 1,
      a: [true, null, 0.1, 1e21, 'ü€😀'],
      nested: { b: 'x', a: 'y' },
      nul: 'ab',
    });

    let prevHash = GENESIS;
    for (const line of lines) {
      expect(line.prevHash).toBe(prevHash);
      expect(offlineHash(line)).toBe(line.hash);
      prevHash = line.hash;
    }
    const list = await ctx.get(AUDIT, { token: org.token });
    expect(list.json().data.map((e: AuditEntry) => e.hash)).toEqual(lines.map((l) => l.hash).reverse());
  });

  it('verifies and exports a chain longer than one 1000-entry batch, and finds tampering past the first batch', async () => {
    const org = await ctx.register();
    const orgId = org.organization.id;
    await appendMany(ctx, orgId, 1_050, { concurrency: 25 });
    const total = 1_051;

    const rows = await auditEntriesOf(ctx, orgId);
    expect(await verify(org.token)).toEqual({
      valid: true,
      totalEntries: total,
      firstEntry: rows[0]!.createdAt.toISOString(),
      lastEntry: rows[total - 1]!.createdAt.toISOString(),
      verifiedFrom: 1,
    });
    const lines = await exportLines(org.token);
    expect(lines).toHaveLength(total);
    expect(sequences(lines)).toEqual(range(1, total));
    expect(lines[1000]!.prevHash).toBe(lines[999]!.hash);
    expect(offlineHash(lines[1000]!)).toBe(lines[1000]!.hash);

    await ctx.db.db.execute(
      sql`update audit_entries set metadata = '{}' where organization_id = ${orgId} and sequence = 1020`,
    );
    // Below the verified prefix: an incremental run only checks that the prefix's entry kept its hash.
    expect(await verify(org.token)).toMatchObject({ valid: true, verifiedFrom: total + 1 });
    expect((await verify(org.token, true)).brokenAt).toEqual({
      sequence: 1020,
      id: rows[1019]!.id,
      reason: 'hash_mismatch',
    });
  });
});
