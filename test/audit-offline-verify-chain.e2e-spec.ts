import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { chainHash, GENESIS_HASH } from '#platform';
import {
  AUDIT,
  offlineVerifySuite,
  runVerifier,
  standard,
  verifyOffline,
} from './support/audit-offline-suite.js';

/**
 * The offline verifier (packages/audit-verify) run as a child process on the files an organization downloads from
 * the service (the export, the checkpoints list and the public keys, written exactly as the API returned them), on
 * the chain: a clean export passes; an altered entry, a deleted one, a cut tail and a recomputed chain each fail,
 * and the service's own verification agrees. Forged checkpoints and checkpoints from webhooks:
 * audit-offline-verify-checkpoints.
 */
describe('offline audit verification (packages/audit-verify) of real service downloads', () => {
  const s = offlineVerifySuite();
  const { rowsOf, serviceVerify, download, chainWithTwoCheckpoints } = s;

  it('passes a clean export with two signed checkpoints: exit 0, OK, both valid and contained', async () => {
    const { org, first, second, head } = await chainWithTwoCheckpoints();
    const d = await download(org.token);
    expect(d.exportBody.trimEnd().split('\n')).toHaveLength(head);
    // newest first, exactly the two signed through POST
    expect(d.checkpoints).toEqual([second, first]);
    expect(d.keyIds).toContain(second.keyId);

    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.verdict).toMatch(/^OK: /);
    expect(text.verdict).toContain(`${head} entries, chain intact`);
    expect(text.verdict).toContain(`2 checkpoints verified, latest at sequence ${second.sequence}`);
    expect(text.stderr).toBe('');

    expect(report.ok).toBe(true);
    expect(report.failures).toEqual([]);
    expect(report.export).toMatchObject({
      entries: head,
      organizationId: org.organization.id,
      firstSequence: 1,
      lastSequence: head,
    });
    expect(report.chain).toMatchObject({ valid: true, headSequence: head, brokenAt: null });
    expect(report.keys.every((k) => k.status === 'ok')).toBe(true);
    expect(report.checkpoints).toHaveLength(2);
    for (const checkpoint of [first, second]) {
      expect(report.checkpoints.find((c) => c.id === checkpoint.id)).toMatchObject({
        sequence: checkpoint.sequence,
        keyId: checkpoint.keyId,
        signature: 'valid',
        sameOrganization: true,
        containment: 'contained',
        exportHash: checkpoint.hash,
        ok: true,
      });
    }
    expect(report.truncation).toEqual({
      truncated: false,
      exportEndsAt: head,
      latestCheckpointSequence: second.sequence,
    });
    // the service agrees
    expect(await serviceVerify(org.token)).toMatchObject({ valid: true, totalEntries: head });
  });

  it('finds an entry altered after the checkpoints: exit 1, hash_mismatch at its sequence', async () => {
    const { ctx } = s;
    const { org, first, second } = await chainWithTwoCheckpoints();
    const orgId = org.organization.id;
    const altered = 3;
    const rows = await rowsOf(orgId);
    await ctx.db.db.execute(
      sql`update audit_entries set metadata = '{"n":999}' where organization_id = ${orgId} and sequence = ${altered}`,
    );
    expect((await serviceVerify(org.token)).brokenAt).toEqual({
      sequence: altered,
      id: rows[altered - 1]!.id,
      reason: 'hash_mismatch',
    });

    const d = await download(org.token);
    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout).toBe(1);
    expect(text.verdict).toMatch(/^FAILED: /);
    expect(text.verdict).toContain(`chain broken at line ${altered} (sequence ${altered}): hash_mismatch`);
    expect(report.ok).toBe(false);
    expect(report.chain.valid).toBe(false);
    expect(report.chain.brokenAt).toMatchObject({
      line: altered,
      sequence: altered,
      id: rows[altered - 1]!.id,
      reason: 'hash_mismatch',
    });
    expect(report.chain.headSequence).toBe(altered - 1);
    // the stored hashes were left alone: the checkpoints' hashes are still at their sequences
    for (const c of report.checkpoints)
      expect(c).toMatchObject({ signature: 'valid', containment: 'contained' });
    expect(report.checkpoints.map((c) => c.sequence).sort((a, b) => a - b)).toEqual([
      first.sequence,
      second.sequence,
    ]);
    expect(report.truncation.truncated).toBe(false);
  });

  it('finds a deleted middle entry: exit 1, sequence_gap at the next sequence', async () => {
    const { ctx } = s;
    const { org, head } = await chainWithTwoCheckpoints();
    const orgId = org.organization.id;
    const dropped = 4;
    const rows = await rowsOf(orgId);
    await ctx.db.db.execute(
      sql`delete from audit_entries where organization_id = ${orgId} and sequence = ${dropped}`,
    );

    const d = await download(org.token);
    expect(d.exportBody.trimEnd().split('\n')).toHaveLength(head - 1);
    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout).toBe(1);
    expect(text.verdict).toMatch(/^FAILED: /);
    expect(text.verdict).toContain(`chain broken at line ${dropped} (sequence ${dropped + 1}): sequence_gap`);
    expect(report.ok).toBe(false);
    expect(report.chain.brokenAt).toMatchObject({
      line: dropped,
      sequence: dropped + 1,
      id: rows[dropped]!.id,
      reason: 'sequence_gap',
    });
    expect(report.chain.brokenAt!.detail).toContain(`expected sequence ${dropped}, found ${dropped + 1}`);
    expect(report.export.lastSequence).toBe(head);
    expect(report.truncation.truncated).toBe(false);
  });

  it('finds a cut tail against the latest signed checkpoint: chain intact, truncated, exit 1', async () => {
    const { ctx } = s;
    const { org, first, second, head } = await chainWithTwoCheckpoints();
    const orgId = org.organization.id;
    // the tail from two entries before the second checkpoint: the chain now ends before it
    const endsAt = second.sequence - 2;
    await ctx.db.db.execute(
      sql`delete from audit_entries where organization_id = ${orgId} and sequence > ${endsAt}`,
    );
    expect((await rowsOf(orgId)).length).toBe(endsAt);
    expect(head - endsAt).toBe(5);
    // the service finds it too, against its own highest checkpoint
    expect((await serviceVerify(org.token)).brokenAt).toMatchObject({
      sequence: second.sequence,
      reason: 'truncated',
    });

    const d = await download(org.token);
    expect(d.checkpoints.map((c) => c.sequence)).toEqual([second.sequence, first.sequence]);
    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout).toBe(1);
    expect(text.verdict).toBe(
      `FAILED: export truncated: ends at sequence ${endsAt}, a signed checkpoint is at sequence ${second.sequence}`,
    );
    expect(report.ok).toBe(false);
    // what is left is a valid chain: only the checkpoint shows the cut
    expect(report.chain).toMatchObject({ valid: true, headSequence: endsAt, brokenAt: null });
    expect(report.truncation).toEqual({
      truncated: true,
      exportEndsAt: endsAt,
      latestCheckpointSequence: second.sequence,
    });
    const byId = (id: string) => report.checkpoints.find((c) => c.id === id);
    expect(byId(second.id)).toMatchObject({
      signature: 'valid',
      containment: 'beyond_export',
      exportHash: null,
      ok: false,
    });
    expect(byId(first.id)).toMatchObject({ signature: 'valid', containment: 'contained', ok: true });
  });

  it('finds a recomputed chain: intact in itself, but the signed checkpoints are rewritten, exit 1', async () => {
    const { ctx } = s;
    const { org, first, second, head } = await chainWithTwoCheckpoints();
    const orgId = org.organization.id;
    const altered = 3;
    await ctx.db.db.execute(
      sql`update audit_entries set metadata = '{"n":"rewritten"}' where organization_id = ${orgId} and sequence = ${altered}`,
    );
    // recompute every link and hash from the altered entry on, with the service's own hash
    const rows = await rowsOf(orgId);
    let prevHash = rows[altered - 2]!.hash;
    for (const row of rows.slice(altered - 1)) {
      const hash = chainHash(prevHash, row);
      await ctx.db.db.execute(
        sql`update audit_entries set prev_hash = ${prevHash}, hash = ${hash} where id = ${row.id}`,
      );
      prevHash = hash;
    }
    const rewritten = await rowsOf(orgId);
    expect(rewritten[0]!.prevHash).toBe(GENESIS_HASH);
    for (let i = 1; i < rewritten.length; i++) expect(rewritten[i]!.prevHash).toBe(rewritten[i - 1]!.hash);
    expect(rewritten[first.sequence - 1]!.hash).not.toBe(first.hash);
    expect(rewritten[second.sequence - 1]!.hash).not.toBe(second.hash);

    // The service's full verification: invalid only because of its highest checkpoint.
    expect(await serviceVerify(org.token)).toMatchObject({
      valid: false,
      totalEntries: head,
      verifiedFrom: 1,
      brokenAt: {
        sequence: second.sequence,
        id: rows[second.sequence - 1]!.id,
        reason: 'checkpoint_mismatch',
      },
    });
    // nor will it sign the rewritten head
    const refused = await ctx.post(`${AUDIT}/checkpoints`, { token: org.token });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toMatchObject({ success: false, code: 'AUDIT_CHAIN_INVALID' });

    const d = await download(org.token);
    const { text, report } = await verifyOffline(standard(d));
    expect(text.code, text.stdout).toBe(1);
    expect(text.verdict).toMatch(/^FAILED: chain rewritten: entry /);
    expect(report.ok).toBe(false);
    expect(report.chain).toMatchObject({ valid: true, headSequence: head, brokenAt: null });
    expect(report.truncation.truncated).toBe(false);
    for (const checkpoint of [first, second]) {
      expect(report.checkpoints.find((c) => c.id === checkpoint.id)).toMatchObject({
        signature: 'valid',
        containment: 'rewritten',
        exportHash: rewritten[checkpoint.sequence - 1]!.hash,
        ok: false,
      });
      expect(report.failures).toContainEqual(
        expect.stringMatching(new RegExp(`^chain rewritten: entry ${checkpoint.sequence} has hash `)),
      );
    }
    // the chain alone, without the checkpoints, passes: only the signed checkpoints reveal the rewrite
    const alone = await runVerifier(['--export', d.files.export]);
    expect(alone.code, alone.stdout).toBe(0);
    expect(alone.verdict).toMatch(/^OK: /);
  });
});
