import { generateKeyPairSync } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { type Checkpoint, signClaims } from './support/audit-checkpoints.js';
import { HOOKS, offlineVerifySuite, thumbprint, verifyOffline } from './support/audit-offline-suite.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/**
 * The offline verifier (packages/audit-verify) on the signed checkpoints an organization holds: one re-signed or
 * forged with another key is refused (unknown_key, bad_signature), and the copies the audit.checkpoint webhook
 * delivered verify like the API's list and show a tail cut later. The chain itself: audit-offline-verify-chain.
 */
describe('offline audit verification (packages/audit-verify) of real service downloads', () => {
  const s = offlineVerifySuite();
  const { appendMany, writeFile, signHead, download, chainWithTwoCheckpoints } = s;

  it('refuses a checkpoint signed by another key: unknown_key with its own keyId, bad_signature with the real one', async () => {
    const { ctx } = s;
    const { org, second, head } = await chainWithTwoCheckpoints();
    const d = await download(org.token);
    const real = d.checkpoints.find((c) => c.id === second.id)!;
    expect(real).toEqual(second);
    const listBody = JSON.parse(d.checkpointsBody) as { data: Checkpoint[] };

    const other = generateKeyPairSync('ed25519');
    const otherKeyId = thumbprint(other.publicKey);
    expect(d.keyIds).not.toContain(otherKeyId);
    const resigned: Checkpoint = {
      ...real,
      keyId: otherKeyId,
      signature: signClaims(real, otherKeyId, other.privateKey),
    };
    const forged: Checkpoint = { ...real, signature: signClaims(real, real.keyId, other.privateKey) };
    expect(forged.signature).not.toBe(real.signature);

    // 1. Re-signed with the other key under its own key id: no key of the service has that id.
    const unknownFile = writeFile(
      'checkpoints-unknown.json',
      JSON.stringify({ ...listBody, data: [resigned] }),
    );
    const unknown = await verifyOffline({
      export: d.files.export,
      checkpoints: [unknownFile],
      keys: [d.files.keys],
    });
    expect(unknown.text.code, unknown.text.stdout).toBe(1);
    expect(unknown.text.verdict).toBe(
      `FAILED: checkpoint ${real.id} (sequence ${real.sequence}): unknown_key (key ${otherKeyId})`,
    );
    expect(unknown.report.ok).toBe(false);
    expect(unknown.report.chain.valid).toBe(true);
    expect(unknown.report.checkpoints).toEqual([
      expect.objectContaining({
        id: real.id,
        keyId: otherKeyId,
        signature: 'unknown_key',
        containment: 'not_checked',
        ok: false,
      }),
    ]);
    // an untrusted checkpoint pins nothing
    expect(unknown.report.truncation).toEqual({
      truncated: false,
      exportEndsAt: head,
      latestCheckpointSequence: null,
    });

    // Control: the re-signed checkpoint is well formed; with the other key published beside the service's, it verifies.
    const otherKeys = writeFile(
      'other-key.json',
      JSON.stringify({
        keys: [
          {
            keyId: otherKeyId,
            algorithm: 'Ed25519',
            publicKeyPem: other.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
            jwk: { kty: 'OKP', crv: 'Ed25519', x: other.publicKey.export({ format: 'jwk' }).x },
            createdAt: ctx.clock.now().toISOString(),
          },
        ],
      }),
    );
    const control = await verifyOffline({
      export: d.files.export,
      checkpoints: [unknownFile],
      keys: [d.files.keys, otherKeys],
    });
    expect(control.text.code, control.text.stdout).toBe(0);
    expect(control.report.checkpoints[0]).toMatchObject({ signature: 'valid', containment: 'contained' });

    // 2. The real key id, a signature by the other key.
    const badFile = writeFile('checkpoints-bad.json', JSON.stringify({ ...listBody, data: [forged] }));
    const bad = await verifyOffline({ export: d.files.export, checkpoints: [badFile], keys: [d.files.keys] });
    expect(bad.text.code, bad.text.stdout).toBe(1);
    expect(bad.text.verdict).toBe(
      `FAILED: checkpoint ${real.id} (sequence ${real.sequence}): bad_signature (key ${real.keyId})`,
    );
    expect(bad.report.checkpoints).toEqual([
      expect.objectContaining({
        id: real.id,
        keyId: real.keyId,
        signature: 'bad_signature',
        containment: 'not_checked',
        ok: false,
      }),
    ]);
    // a forged copy beside the genuine list: the genuine ones verify, the forged one fails the run
    const both = await verifyOffline({
      export: d.files.export,
      checkpoints: [d.files.checkpoints, badFile],
      keys: [d.files.keys],
    });
    expect(both.text.code, both.text.stdout).toBe(1);
    expect(both.report.checkpoints.map((c) => c.signature).sort()).toEqual([
      'bad_signature',
      'valid',
      'valid',
    ]);
    expect(both.report.failures).toEqual([
      `checkpoint ${real.id} (sequence ${real.sequence}): bad_signature (key ${real.keyId})`,
    ]);
  });

  it('accepts the checkpoints as the audit.checkpoint webhook delivered them (NDJSON of the bodies)', async () => {
    const { ctx } = s;
    const receiver = await WebhookReceiver.start();
    try {
      const org = await ctx.register();
      const orgId = org.organization.id;
      const hook = await ctx.post(HOOKS, {
        token: org.token,
        body: { url: receiver.url, events: ['audit.checkpoint'] },
      });
      expect(hook.statusCode, hook.body).toBe(201);
      await appendMany(orgId, 3);
      const first = await signHead(org.token);
      await receiver.waitFor(1);
      await appendMany(orgId, 2);
      const second = await signHead(org.token);
      await receiver.waitFor(2);
      // signing the same head again answers its checkpoint and sends nothing
      expect(await signHead(org.token)).toEqual(second);
      await appendMany(orgId, 1);

      expect(receiver.received.map((r) => r.json.type)).toEqual(['audit.checkpoint', 'audit.checkpoint']);
      expect(receiver.received.map((r) => r.json.data)).toEqual([first, second]);
      const webhookFile = writeFile(
        'webhook-checkpoints.ndjson',
        receiver.received.map((r) => r.body).join('\n'),
      );

      const d = await download(org.token);
      // the webhook copies alone
      const hooked = await verifyOffline({
        export: d.files.export,
        checkpoints: [webhookFile],
        keys: [d.files.keys],
      });
      expect(hooked.text.code, hooked.text.stdout).toBe(0);
      expect(hooked.text.verdict).toMatch(/^OK: /);
      expect(hooked.report.checkpoints.map((c) => [c.id, c.signature, c.containment])).toEqual([
        [first.id, 'valid', 'contained'],
        [second.id, 'valid', 'contained'],
      ]);
      // with the API's list too: the same checkpoints count once
      const together = await verifyOffline({
        export: d.files.export,
        checkpoints: [d.files.checkpoints, webhookFile],
        keys: [d.files.keys],
      });
      expect(together.text.code, together.text.stdout).toBe(0);
      expect(together.report.checkpoints).toHaveLength(2);

      // NDJSON built from the list body, one webhook-shaped line per checkpoint, among other event types
      const built = [
        JSON.stringify({
          type: 'trace.flagged',
          timestamp: ctx.clock.now().toISOString(),
          data: { traceId: 'x' },
        }),
        ...d.checkpoints.map((data) =>
          JSON.stringify({ type: 'audit.checkpoint', timestamp: data.createdAt, data }),
        ),
      ].join('\n');
      const builtRun = await verifyOffline({
        export: d.files.export,
        checkpoints: [writeFile('built-webhook.ndjson', `${built}\n`)],
        keys: [d.files.keys],
      });
      expect(builtRun.text.code, builtRun.text.stdout).toBe(0);
      expect(builtRun.report.checkpoints).toHaveLength(2);

      // the webhook copies kept, the tail cut later: the kept copies show it
      await ctx.db.db.execute(
        sql`delete from audit_entries where organization_id = ${orgId} and sequence >= ${second.sequence}`,
      );
      const cut = await download(org.token);
      const after = await verifyOffline({
        export: cut.files.export,
        checkpoints: [webhookFile],
        keys: [d.files.keys],
      });
      expect(after.text.code, after.text.stdout).toBe(1);
      expect(after.text.verdict).toBe(
        `FAILED: export truncated: ends at sequence ${second.sequence - 1}, a signed checkpoint is at sequence ${second.sequence}`,
      );
    } finally {
      await receiver.close();
    }
  });
});
