import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntries } from '#platform';
import { PoliciesService } from '../../libs/governance/src/policies/policies.service.js';
import { PolicySet } from '../../libs/governance/src/policies/policy-set.js';
import { TEST_META, type TestOrganization } from '../support/builders.js';
import { MediumContext } from '../support/medium.js';

const EMAIL = { field: 'outputDecision.text', operator: 'contains', value: '@' } as const;

describe('PoliciesService with its repository, the compiled policy set and the audit log', () => {
  let ctx: MediumContext;
  let org: TestOrganization;
  let other: TestOrganization;
  let policies: PoliciesService;
  let set: PolicySet;

  beforeAll(async () => {
    ctx = await MediumContext.create();
    org = await ctx.newOrganization({ organizationName: 'Policies Org' });
    other = await ctx.newOrganization({ organizationName: 'Other Org' });
    policies = ctx.service(PoliciesService);
    set = ctx.service(PolicySet);
  });

  afterAll(async () => ctx?.close());

  const activeIds = async (organizationId: string) =>
    (await set.forOrganization(organizationId)).map((p) => p.id).sort();

  it('serves a new policy in the compiled set at once: the cached set is dropped at commit', async () => {
    const before = await activeIds(org.id);
    const id = await ctx.newPolicy(org.id, { name: 'No e-mail', outcome: 'block', conditions: [EMAIL] });
    expect(await activeIds(org.id)).toEqual([...before, id].sort());
    expect(await activeIds(other.id)).not.toContain(id);
  });

  it('drops a deactivated policy from the set, and brings it back when it is activated again', async () => {
    const id = await ctx.newPolicy(org.id, { outcome: 'flag', conditions: [EMAIL] });
    await policies.update(org.owner, id, { isActive: false }, TEST_META);
    expect(await activeIds(org.id)).not.toContain(id);
    await policies.update(org.owner, id, { isActive: true }, TEST_META);
    expect(await activeIds(org.id)).toContain(id);
  });

  it('audits create, update and delete with what changed, in the organization’s chain', async () => {
    const id = await ctx.newPolicy(org.id, { name: 'Audited', outcome: 'flag', conditions: [EMAIL] });
    await policies.update(org.owner, id, { name: 'Audited, renamed' }, TEST_META);
    await policies.remove(org.owner, id, TEST_META);
    const entries = await ctx.db.db
      .select({
        eventType: auditEntries.eventType,
        metadata: auditEntries.metadata,
        userId: auditEntries.userId,
      })
      .from(auditEntries)
      .where(and(eq(auditEntries.organizationId, org.id), eq(auditEntries.targetId, id)))
      .orderBy(auditEntries.sequence);
    expect(entries.map((e) => e.eventType)).toEqual(['policy.created', 'policy.updated', 'policy.deleted']);
    expect(entries[0]).toMatchObject({
      userId: org.owner.userId,
      metadata: { name: 'Audited', outcome: 'flag' },
    });
    expect(entries[1]!.metadata).toMatchObject({ name: 'Audited, renamed' });
    expect(await activeIds(org.id)).not.toContain(id);
  });

  it('refuses a policy naming an agent of another organization, and writes nothing', async () => {
    const theirs = await ctx.newAgent(other.id, 'Theirs');
    const before = await activeIds(org.id);
    await expect(
      ctx.newPolicy(org.id, { outcome: 'block', conditions: [EMAIL], agentIds: [theirs.id] }),
    ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(await activeIds(org.id)).toEqual(before);
  });

  it('does not let one organization change another’s policy', async () => {
    const id = await ctx.newPolicy(other.id, { outcome: 'block', conditions: [EMAIL] });
    await expect(policies.update(org.owner, id, { isActive: false }, TEST_META)).rejects.toMatchObject({
      status: 404,
    });
    expect(await activeIds(other.id)).toContain(id);
  });
});
