import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog, auditEntries, GENESIS_HASH } from '#platform';
import { AuditService } from '../../libs/governance/src/audit/audit.service.js';
import { ApiKeysService } from '../../libs/identity/src/api-keys/api-keys.service.js';
import { WorkspaceKeyResolver } from '../../libs/identity/src/api-keys/workspace-key.resolver.js';
import { TEST_META, type TestOrganization } from '../support/builders.js';
import { MediumContext } from '../support/medium.js';

describe('the audit log’s chains, written by several services at once', () => {
  let ctx: MediumContext;
  let a: TestOrganization;
  let b: TestOrganization;
  let audit: AuditLog;

  beforeAll(async () => {
    ctx = await MediumContext.create();
    a = await ctx.newOrganization({ organizationName: 'Chain A' });
    b = await ctx.newOrganization({ organizationName: 'Chain B' });
    audit = ctx.service(AuditLog);
  });

  afterAll(async () => ctx?.close());

  async function chain(organizationId: string) {
    return ctx.db.db
      .select({ sequence: auditEntries.sequence, prevHash: auditEntries.prevHash, hash: auditEntries.hash })
      .from(auditEntries)
      .where(eq(auditEntries.organizationId, organizationId))
      .orderBy(auditEntries.sequence);
  }

  it('keeps each organization’s chain gap-free and linked when appends of both run concurrently', async () => {
    const system = (organizationId: string) => ({
      organizationId,
      actor: { type: 'system' as const, id: null, email: null },
    });
    await Promise.all([
      ...Array.from({ length: 15 }, (_, i) => audit.record(system(a.id), 'test.concurrent', null, { i })),
      ...Array.from({ length: 15 }, (_, i) => audit.record(system(b.id), 'test.concurrent', null, { i })),
      audit.appendMany([
        { ...system(a.id), eventType: 'test.batch' },
        { ...system(b.id), eventType: 'test.batch' },
        { ...system(a.id), eventType: 'test.batch' },
      ]),
      ctx.newAgent(a.id, 'Audited meanwhile'),
      ctx.newPolicy(b.id, {
        outcome: 'flag',
        conditions: [{ field: 'confidence', operator: 'lt', value: 0.2 }],
      }),
    ]);
    for (const org of [a, b]) {
      const rows = await chain(org.id);
      expect(rows.map((r) => Number(r.sequence))).toEqual(rows.map((_, i) => i + 1));
      expect(rows[0]!.prevHash).toBe(GENESIS_HASH);
      for (let i = 1; i < rows.length; i++) expect(rows[i]!.prevHash).toBe(rows[i - 1]!.hash);
      const verified = await ctx.service(AuditService).verify(org.id);
      expect(verified).toMatchObject({ valid: true, totalEntries: rows.length });
    }
    expect((await chain(a.id)).length).toBeGreaterThanOrEqual(1 + 15 + 2 + 1);
  });

  it('finds a tampered entry and names its sequence', async () => {
    const rows = await chain(b.id);
    const target = rows[Math.floor(rows.length / 2)]!;
    await ctx.db.db
      .update(auditEntries)
      .set({ metadata: sql`jsonb_build_object('tampered', true)` })
      .where(and(eq(auditEntries.organizationId, b.id), eq(auditEntries.sequence, target.sequence)));
    const verified = await ctx.service(AuditService).verify(b.id, { full: true });
    expect(verified).toMatchObject({ valid: false, brokenAt: { sequence: Number(target.sequence) } });
    expect(await ctx.service(AuditService).verify(a.id)).toMatchObject({ valid: true });
  });
});

describe('ApiKeysService with its repository, the resolver and the agent directory', () => {
  let ctx: MediumContext;
  let org: TestOrganization;
  let other: TestOrganization;
  let keys: ApiKeysService;
  let resolver: WorkspaceKeyResolver;

  beforeAll(async () => {
    ctx = await MediumContext.create();
    org = await ctx.newOrganization({ organizationName: 'Keys Org' });
    other = await ctx.newOrganization({ organizationName: 'Other Org' });
    keys = ctx.service(ApiKeysService);
    resolver = ctx.service(WorkspaceKeyResolver);
  });

  afterAll(async () => ctx?.close());

  it('creates a key scoped to the organization’s agents that resolves with that scope, then revokes it', async () => {
    const agent = await ctx.newAgent(org.id, 'Scoped');
    const created = await keys.create(org.owner, { name: 'CI', scope: { agentIds: [agent.id] } }, TEST_META);
    expect(await resolver.resolveKey(created.key)).toMatchObject({
      credential: 'workspaceKey',
      organizationId: org.id,
      plan: org.plan,
      scope: { agentIds: [agent.id] },
    });
    await keys.revoke(org.owner, created.id, TEST_META);
    expect(await resolver.resolveKey(created.key)).toBeNull();
  });

  it('refuses a scope that names another organization’s agent, and creates nothing', async () => {
    const theirs = await ctx.newAgent(other.id, 'Theirs');
    await expect(
      keys.create(org.owner, { name: 'Sneaky', scope: { agentIds: [theirs.id] } }, TEST_META),
    ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    const listed = await keys.list(org.owner, { page: 1, limit: 100 });
    expect(listed.items.map((k) => k.name)).not.toContain('Sneaky');
  });

  it('does not let one organization revoke another’s key', async () => {
    const theirs = await keys.create(other.owner, { name: 'Theirs' }, TEST_META);
    await expect(keys.revoke(org.owner, theirs.id, TEST_META)).rejects.toMatchObject({ status: 404 });
    expect(await resolver.resolveKey(theirs.key)).not.toBeNull();
  });
});
