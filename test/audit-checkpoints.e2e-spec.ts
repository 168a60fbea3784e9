import { createPublicKey, generateKeyPairSync, verify as verifySignature } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { EventSource } from 'eventsource';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuditChainReader, AuditService, ChainHasher, Col } from '#governance';
import { AuditLog, JobScheduler } from '#platform';
import { buildProgram } from '../apps/cli/src/cli.js';
import { replicaContext, type Registered, TestContext, testConfig } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { type Checkpoint, claimsBytes, thumbprintOf } from './support/audit-checkpoints.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

const AUDIT = '/api/v1/audit';

interface PublicKey {
  keyId: string;
  algorithm: string;
  publicKeyPem: string;
  jwk: { kty: string; crv: string; x: string; kid: string };
  createdAt: string;
  current: boolean;
}

/** Checks a checkpoint's signature as an outsider would: node:crypto, the published key, RFC 8785 bytes. */
function signatureHolds(checkpoint: Checkpoint, key: { publicKeyPem: string } | { jwk: object }): boolean {
  const publicKey =
    'publicKeyPem' in key
      ? createPublicKey(key.publicKeyPem)
      : createPublicKey({ key: key.jwk as never, format: 'jwk' });
  return verifySignature(
    null,
    claimsBytes(checkpoint),
    publicKey,
    Buffer.from(checkpoint.signature, 'base64url'),
  );
}

describe('audit: incremental verification and signed checkpoints', () => {
  let ctx: TestContext;
  let audit: AuditLog;

  beforeAll(async () => {
    ctx = await TestContext.create({
      now: '2026-03-02T10:00:00.000Z',
      config: { auditCheckpointInterval: { entries: 5, minutes: 10 }, webhookAllowPrivateNetworks: true },
    });
    audit = ctx.app.get(AuditLog);
  });
  afterAll(async () => ctx?.close());

  const append = (organizationId: string, count = 1) =>
    Promise.all(
      Array.from({ length: count }, (_, n) =>
        audit.append({
          organizationId,
          eventType: 'test.entry',
          actor: { type: 'system', id: null, email: null },
          metadata: { n },
        }),
      ),
    );
  const head = async (org: Registered) => {
    const res = await ctx.get(AUDIT, { token: org.token, query: { limit: '1' } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data[0] as { sequence: number; hash: string; id: string };
  };
  const verify = async (org: Registered, full = false) => {
    const res = await ctx.get(`${AUDIT}/verify`, { token: org.token, query: full ? { full: 'true' } : {} });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as {
      valid: boolean;
      totalEntries: number;
      verifiedFrom: number;
      brokenAt?: { sequence: number; id: string; reason: string };
    };
  };
  const sign = async (org: Registered) => {
    const res = await ctx.post(`${AUDIT}/checkpoints`, { token: org.token });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as Checkpoint;
  };
  const checkpoints = async (org: Registered) => {
    const res = await ctx.get(`${AUDIT}/checkpoints`, { token: org.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { data: Checkpoint[]; pagination: { total: number } };
  };
  const publicKeys = async (context = ctx) => {
    const res = await context.get(`${AUDIT}/public-key`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.keys as PublicKey[];
  };
  const tamper = (org: Registered, sequence: number, change: ReturnType<typeof sql>) =>
    ctx.db.db.execute(
      sql`update audit_entries set ${change} where organization_id = ${org.organization.id} and sequence = ${sequence}`,
    );

  describe('GET /audit/verify', () => {
    it('checks only the entries after the verified prefix, and everything again with full=true', async () => {
      const org = await ctx.register();
      await append(org.organization.id, 9);
      expect(await verify(org)).toMatchObject({ valid: true, totalEntries: 10, verifiedFrom: 1 });
      await append(org.organization.id, 3);
      expect(await verify(org)).toMatchObject({ valid: true, totalEntries: 13, verifiedFrom: 11 });
      // Nothing new: nothing to check after the head.
      expect(await verify(org)).toMatchObject({ valid: true, totalEntries: 13, verifiedFrom: 14 });
      expect(await verify(org, true)).toMatchObject({ valid: true, totalEntries: 13, verifiedFrom: 1 });
    });

    it('finds a row altered below the verified prefix with full=true, and the prefix entry itself at once', async () => {
      const org = await ctx.register();
      await append(org.organization.id, 7);
      expect(await verify(org)).toMatchObject({ valid: true, totalEntries: 8 });
      const rows = (await ctx.get(AUDIT, { token: org.token })).json().data as {
        id: string;
        sequence: number;
        metadata: Record<string, unknown>;
      }[];
      const idOf = (sequence: number) => rows.find((r) => r.sequence === sequence)!.id;
      const original = JSON.stringify(rows.find((r) => r.sequence === 4)!.metadata);

      await tamper(org, 4, sql`metadata = '{"n":"changed"}'`);
      // The incremental run checks that the prefix's entry kept its hash, and the entries after it (none).
      expect(await verify(org)).toMatchObject({ valid: true, verifiedFrom: 9 });
      const found = {
        valid: false,
        verifiedFrom: 1,
        brokenAt: { sequence: 4, id: idOf(4), reason: 'hash_mismatch' },
      };
      expect(await verify(org, true)).toMatchObject(found);
      // The break is remembered: incremental runs start from the first entry again, and nothing is signed.
      expect(await verify(org)).toMatchObject(found);
      expectErrorEnvelope(
        await ctx.post(`${AUDIT}/checkpoints`, { token: org.token }),
        409,
        'AUDIT_CHAIN_INVALID',
      );
      await ctx.service(JobScheduler).runNow('audit-checkpoints');
      expect((await checkpoints(org)).data).toEqual([]);

      // Repaired: a full verification passes and clears the break; signing works again.
      await tamper(org, 4, sql`metadata = ${original}::jsonb`);
      expect(await verify(org)).toMatchObject({ valid: true, verifiedFrom: 1 });
      expect(await verify(org)).toMatchObject({ valid: true, verifiedFrom: 9 });
      expect((await sign(org)).sequence).toBe(8);

      await tamper(org, 8, sql`hash = ${'e'.repeat(64)}`);
      expect(await verify(org)).toMatchObject({
        valid: false,
        brokenAt: { sequence: 8, id: idOf(8), reason: 'verified_prefix_mismatch' },
      });
    });

    it('stores and hashes text that jsonb and text columns would refuse (lone surrogates, NUL) as they keep it', async () => {
      const org = await ctx.register();
      await audit.append({
        organizationId: org.organization.id,
        eventType: 'test.\u0000odd',
        actor: { type: 'api_key', id: 'key\ud800', email: 'nul\u0000@example.com' },
        targetType: 'thing\udfff',
        targetId: 'a\ud800b',
        metadata: { k: 'v\ud800' },
      });
      expect(await verify(org, true)).toMatchObject({ valid: true, totalEntries: 2 });
      const [entry] = (await ctx.get(AUDIT, { token: org.token, query: { limit: '1' } })).json().data;
      expect(entry).toMatchObject({
        eventType: 'test.odd',
        actor: { id: 'key\ufffd', email: 'nul@example.com' },
        targetType: 'thing\ufffd',
        targetId: 'a\ufffdb',
      });
    });

    it('finds a number rewritten to another literal of the same double (other readers would see another value)', async () => {
      const org = await ctx.register();
      await audit.append({
        organizationId: org.organization.id,
        eventType: 'test.amount',
        actor: { type: 'system', id: null, email: null },
        metadata: { amountCents: 9007199254740992, ratio: 0.1, big: 1e21 },
      });
      expect(await verify(org, true)).toMatchObject({ valid: true, totalEntries: 2 });
      await tamper(
        org,
        2,
        sql`metadata = '{"amountCents": 9007199254740993, "ratio": 0.1, "big": 1e21}'::jsonb`,
      );
      expect(await verify(org, true)).toMatchObject({
        valid: false,
        brokenAt: { sequence: 2, reason: 'hash_mismatch' },
      });
    });

    it('answers concurrent verifications of one chain alike, from one walk of it', async () => {
      const org = await ctx.register();
      await append(org.organization.id, 20);
      const results = await Promise.all(Array.from({ length: 6 }, () => verify(org, true)));
      for (const result of results)
        expect(result).toMatchObject({ valid: true, totalEntries: 21, verifiedFrom: 1 });
      // Asked together of the service, the same verification reads the chain once.
      const reader = ctx.service(AuditChainReader);
      const heads = vi.spyOn(reader, 'head');
      try {
        const service = ctx.service(AuditService);
        const together = await Promise.all(
          Array.from({ length: 6 }, () => service.verify(org.organization.id, { full: true })),
        );
        expect(together.map((r) => r.totalEntries)).toEqual([21, 21, 21, 21, 21, 21]);
        expect(heads).toHaveBeenCalledTimes(1);
      } finally {
        heads.mockRestore();
      }
    });

    it('hashes entries with hostile text from the database’s text rows as the writer hashed them', async () => {
      const org = await ctx.register();
      const hostile = [
        'quote " backslash \\ slash /',
        'controls \u0001\u0008\t\n\f\r\u001f\u007f',
        'unicode é € \u2028 \u2029 😀 \ufb33',
        '<script>&amp;</script>',
      ];
      for (const text of hostile) {
        await audit.append({
          organizationId: org.organization.id,
          eventType: `test.${text}`,
          actor: { type: 'api_key', id: text, email: `${text}@example.com` },
          targetType: text,
          targetId: text,
          metadata: { [text]: text, nested: { list: [text, 1e21, -0.5, null] } },
          meta: { ip: text.slice(0, 64), userAgent: text },
        });
      }
      const reader = ctx.service(AuditChainReader);
      const hasher = new ChainHasher(org.organization.id);
      const rows = [];
      for await (const page of reader.pages(org.organization.id, 0, hostile.length + 1)) rows.push(...page);
      expect(rows).toHaveLength(hostile.length + 1);
      for (const row of rows) expect(hasher.hash(row), row[Col.Sequence]!).toBe(row[Col.Hash]);
      expect(await verify(org, true)).toMatchObject({ valid: true, totalEntries: hostile.length + 1 });
    });

    it('answers 400 for a full value other than true or false', async () => {
      const org = await ctx.register();
      expectErrorEnvelope(
        await ctx.get(`${AUDIT}/verify`, { token: org.token, query: { full: 'yes' } }),
        400,
        'VALIDATION_ERROR',
      );
    });
  });

  describe('signed checkpoints', () => {
    it('signs the head on demand with a key anyone can check with node:crypto, once per head', async () => {
      const org = await ctx.register();
      await append(org.organization.id, 2);
      const top = await head(org);
      const checkpoint = await sign(org);
      expect(checkpoint).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        organizationId: org.organization.id,
        sequence: 3,
        hash: top.hash,
        createdAt: ctx.clock.now().toISOString(),
        keyId: expect.any(String),
        signature: expect.stringMatching(/^[A-Za-z0-9_-]{86}$/),
      });

      // Public: no credentials.
      const keys = await publicKeys();
      const key = keys.find((k) => k.keyId === checkpoint.keyId)!;
      expect(key).toMatchObject({ algorithm: 'Ed25519', current: true, jwk: { kty: 'OKP', crv: 'Ed25519' } });
      expect(thumbprintOf(key.jwk.x)).toBe(checkpoint.keyId);
      expect(signatureHolds(checkpoint, key)).toBe(true);
      expect(signatureHolds(checkpoint, { jwk: key.jwk })).toBe(true);
      // Any change of a signed field breaks the signature.
      expect(signatureHolds({ ...checkpoint, sequence: 4 }, key)).toBe(false);
      expect(signatureHolds({ ...checkpoint, hash: '0'.repeat(64) }, key)).toBe(false);

      // The same head again: the same checkpoint.
      ctx.clock.advance(1_000);
      expect((await sign(org)).id).toBe(checkpoint.id);
      await append(org.organization.id);
      const next = await sign(org);
      expect(next).toMatchObject({ sequence: 4, hash: (await head(org)).hash });
      const list = await checkpoints(org);
      expect(list.data.map((c) => c.id)).toEqual([next.id, checkpoint.id]);
      expect(list.pagination.total).toBe(2);
      // Signing writes no audit entry of its own (the head it signed stays the head).
      expect((await head(org)).sequence).toBe(4);
    });

    it('keeps checkpoints to owners and admins of their organization', async () => {
      const org = await ctx.register();
      const other = await ctx.register();
      await sign(org);
      for (const role of ['member', 'viewer'] as const) {
        const { token } = await ctx.addMember(org.organization.id, role);
        expectErrorEnvelope(await ctx.get(`${AUDIT}/checkpoints`, { token }), 403, 'FORBIDDEN');
        expectErrorEnvelope(await ctx.post(`${AUDIT}/checkpoints`, { token }), 403, 'FORBIDDEN');
      }
      const admin = await ctx.addMember(org.organization.id, 'admin');
      expect((await ctx.post(`${AUDIT}/checkpoints`, { token: admin.token })).statusCode).toBe(201);
      expect((await checkpoints(other)).data).toEqual([]);
      expectErrorEnvelope(await ctx.get(`${AUDIT}/checkpoints`), 401, 'UNAUTHORIZED');
    });

    it('refuses to sign a chain that does not verify, and the verification reads a truncation against a checkpoint', async () => {
      const org = await ctx.register();
      await append(org.organization.id, 4);
      const checkpoint = await sign(org);
      expect(checkpoint.sequence).toBe(5);

      // Cut the end: the chain alone still links, but it ends before the signed head.
      await ctx.db.db.execute(
        sql`delete from audit_entries where organization_id = ${org.organization.id} and sequence >= 4`,
      );
      expect(await verify(org, true)).toMatchObject({
        valid: false,
        brokenAt: { sequence: 5, reason: 'truncated' },
      });
      expectErrorEnvelope(
        await ctx.post(`${AUDIT}/checkpoints`, { token: org.token }),
        409,
        'AUDIT_CHAIN_INVALID',
      );
    });

    it('signs heads on the interval, after AUDIT_CHECKPOINT_INTERVAL entries or minutes', async () => {
      const scheduler = ctx.service(JobScheduler);
      const org = await ctx.register();
      const run = async () => {
        await scheduler.runNow('audit-checkpoints');
        return (await checkpoints(org)).data.map((c) => c.sequence);
      };
      expect(await run()).toEqual([]);
      await append(org.organization.id, 3);
      expect(await run()).toEqual([]);
      await append(org.organization.id, 1);
      expect(await run()).toEqual([5]); // 5 entries
      await append(org.organization.id, 2);
      expect(await run()).toEqual([5]);
      ctx.clock.advance(9 * 60_000);
      expect(await run()).toEqual([5]);
      ctx.clock.advance(60_000);
      expect(await run()).toEqual([7, 5]); // the oldest unsigned entry is 10 minutes old
      ctx.clock.advance(60 * 60_000);
      expect(await run()).toEqual([7, 5]); // nothing new: nothing to sign
    });

    it('sends each new checkpoint as the audit.checkpoint event to webhooks and to the event stream', async () => {
      ctx.clock.set(new Date()); // receivers refuse old webhook timestamps
      const org = await ctx.register();
      const receiver = await WebhookReceiver.start();
      await ctx.app.listen(0, '127.0.0.1');
      const base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
      const hook = await ctx.post('/api/v1/webhooks', {
        token: org.token,
        body: { url: receiver.url, events: ['audit.checkpoint'] },
      });
      expect(hook.statusCode, hook.body).toBe(201);
      const streamToken = await ctx.post('/api/v1/auth/stream-token', { token: org.token });
      expect(streamToken.statusCode).toBe(201);
      const streamed: { type: string; data: Checkpoint }[] = [];
      const source = new EventSource(`${base}/api/v1/events/stream?token=${streamToken.json().data.token}`);
      source.addEventListener('audit.checkpoint', (e) => streamed.push(JSON.parse(e.data)));
      try {
        await new Promise<void>((resolve, reject) => {
          source.onopen = () => resolve();
          setTimeout(() => reject(new Error('stream did not open')), 5000);
        });
        const checkpoint = await sign(org);
        await sign(org); // the same head: no second event
        await receiver.waitFor(1);
        await expect.poll(() => streamed.length).toBe(1);
        await new Promise((r) => setTimeout(r, 200));
        expect(receiver.received).toHaveLength(1);
        const [got] = receiver.received;
        const payload = new Webhook(hook.json().data.secret).verify(
          got!.body,
          got!.headers as Record<string, string>,
        ) as { type: string; data: Checkpoint };
        expect(payload).toMatchObject({ type: 'audit.checkpoint', data: checkpoint });
        expect(streamed[0]).toMatchObject({ type: 'audit.checkpoint', data: checkpoint });
        // The copy the customer keeps verifies with the published key.
        const key = (await publicKeys()).find((k) => k.keyId === payload.data.keyId)!;
        expect(signatureHolds(payload.data, key)).toBe(true);
      } finally {
        source.close();
        await receiver.close();
      }
    });

    it('verifies and signs from the operator CLI (audit:verify [--full], audit:checkpoint)', async () => {
      const org = await ctx.register();
      await append(org.organization.id, 4);
      const printed: Record<string, unknown>[] = [];
      const cli = () =>
        buildProgram(
          (fn) => fn(ctx.app),
          (value) => printed.push(value as Record<string, unknown>),
        );
      await cli().parseAsync(['node', 'cli', 'audit:verify', org.organization.id]);
      await cli().parseAsync(['node', 'cli', 'audit:verify', org.organization.id]);
      await cli().parseAsync(['node', 'cli', 'audit:verify', org.organization.id, '--full']);
      expect(printed.map((p) => [p.valid, p.totalEntries, p.verifiedFrom])).toEqual([
        [true, 5, 1],
        [true, 5, 6],
        [true, 5, 1],
      ]);
      await cli().parseAsync(['node', 'cli', 'audit:checkpoint', org.organization.id]);
      const [listed] = (await checkpoints(org)).data;
      expect(printed[3]).toEqual(listed);
      expect(listed).toMatchObject({ organizationId: org.organization.id, sequence: 5 });
    });

    it('keeps older checkpoints verifiable after a key rotation, each naming its key', async () => {
      const org = await ctx.register();
      const before = await sign(org);
      const newKey = generateKeyPairSync('ed25519')
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString();
      const rotated = await replicaContext(ctx, { config: { ...ctx.config, auditSigningKey: newKey } });
      try {
        await append(org.organization.id);
        const res = await rotated.post(`${AUDIT}/checkpoints`, { token: org.token });
        expect(res.statusCode, res.body).toBe(201);
        const after = res.json().data as Checkpoint;
        expect(after.keyId).not.toBe(before.keyId);
        const keys = await publicKeys(rotated);
        expect(keys.map((k) => k.keyId)).toEqual(expect.arrayContaining([before.keyId, after.keyId]));
        expect(keys.find((k) => k.keyId === after.keyId)!.current).toBe(true);
        expect(keys.find((k) => k.keyId === before.keyId)!.current).toBe(false);
        const keyOf = (c: Checkpoint) => keys.find((k) => k.keyId === c.keyId)!;
        expect(signatureHolds(before, keyOf(before))).toBe(true);
        expect(signatureHolds(after, keyOf(after))).toBe(true);
        expect(signatureHolds(after, keyOf(before))).toBe(false);
      } finally {
        await rotated.close();
      }
    });
  });
});

describe('audit: the limiter of whole-chain reads', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({
      config: {
        userRateLimits: { ...testConfig().userRateLimits, auditChain: { max: 3, windowMs: 3600_000 } },
      },
    });
  });
  afterAll(async () => ctx?.close());

  it('counts verification, export and signing per user: 429 RATE_LIMITED with Retry-After beyond the limit', async () => {
    const org = await ctx.register();
    expect((await ctx.get(`${AUDIT}/verify`, { token: org.token })).statusCode).toBe(200);
    expect((await ctx.get(`${AUDIT}/export`, { token: org.token })).statusCode).toBe(200);
    expect((await ctx.post(`${AUDIT}/checkpoints`, { token: org.token })).statusCode).toBe(201);
    const refused = await ctx.get(`${AUDIT}/verify`, { token: org.token, query: { full: 'true' } });
    expectErrorEnvelope(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another user has a window of their own; the list is not limited.
    const admin = await ctx.addMember(org.organization.id, 'admin');
    expect((await ctx.get(`${AUDIT}/verify`, { token: admin.token })).statusCode).toBe(200);
    expect((await ctx.get(AUDIT, { token: org.token })).statusCode).toBe(200);
  });
});
