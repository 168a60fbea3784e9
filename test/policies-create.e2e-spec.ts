import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLICY_TEMPLATES } from '../libs/governance/src/policies/engine/index.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntries } from './support/audit-entries.js';
import { EMAIL_BLOCK, fakeId, POLICIES, policyHelpers, type PolicyBody } from './support/policies-suite.js';

const OBJECT_ID = /^[0-9a-f]{24}$/;

describe('policies', () => {
  let ctx: TestContext;
  let owner: Registered;
  let admin: { userId: string; token: string };
  let member: { userId: string; token: string };
  let viewer: { userId: string; token: string };
  /** Agents of the owner's organization: a policy may name only those. */
  let agents: [string, string];

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Policy Owners' });
    await ctx.register({ organizationName: 'Other Org' });
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    agents = [
      (await ctx.newAgent(owner.organization.id, 'First')).id,
      (await ctx.newAgent(owner.organization.id, 'Second')).id,
    ];
  });
  afterAll(async () => ctx?.close());

  const { create, expectRefused } = policyHelpers(
    () => ctx,
    () => owner,
  );

  describe('create', () => {
    it('creates a policy with the defaults (match all, every agent, priority 100, active) and returns 201 with every field', async () => {
      const before = Date.now();
      const res = await ctx.post(POLICIES, { token: owner.token, body: EMAIL_BLOCK });
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expect(body.success).toBe(true);
      const data = body.data as PolicyBody;
      expect(data).toEqual({
        id: expect.stringMatching(OBJECT_ID),
        name: EMAIL_BLOCK.name,
        description: EMAIL_BLOCK.description,
        outcome: 'block',
        conditions: EMAIL_BLOCK.conditions,
        match: 'all',
        agentIds: [],
        priority: 100,
        isActive: true,
        templateId: null,
        createdBy: owner.user.id,
        createdAt: expect.any(String),
        updatedAt: data.createdAt,
      });
      expect(Date.parse(data.createdAt)).toBeGreaterThanOrEqual(before - 60_000);
    });

    it('stores match, agentIds (deduplicated), priority and isActive when given, for an admin', async () => {
      const data = await create(
        {
          name: 'Flag low confidence for two agents',
          outcome: 'flag',
          conditions: [
            { field: 'confidence', operator: 'lt', value: 0.5 },
            { field: 'metadata.customer.tier', operator: 'in', value: ['gold', 1] },
          ],
          match: 'any',
          agentIds: [agents[0], agents[1], agents[0]],
          priority: 5,
          isActive: false,
        },
        admin.token,
      );
      expect(data).toMatchObject({
        outcome: 'flag',
        match: 'any',
        agentIds: [agents[0], agents[1]],
        priority: 5,
        isActive: false,
        description: null,
        createdBy: admin.userId,
      });
    });

    it('creates from a template, with the template name unless one is given', async () => {
      const template = POLICY_TEMPLATES[0]!;
      const plain = await create({ templateId: template.id });
      expect(plain).toMatchObject({
        name: template.name,
        description: template.description,
        outcome: template.outcome,
        conditions: template.conditions,
        match: 'all',
        agentIds: [],
        priority: 100,
        isActive: true,
        templateId: template.id,
      });
      const named = await create({ templateId: 'prompt-injection', name: 'Injection watch' });
      expect(named).toMatchObject({
        name: 'Injection watch',
        templateId: 'prompt-injection',
        outcome: 'flag',
      });
    });

    it('returns 400 for an unknown templateId', async () => {
      await expectRefused({ templateId: 'no-such-template' }, 'templateId', /not a known template/);
    });

    it('returns 400 when a template is combined with policy fields', async () => {
      await expectRefused(
        { templateId: 'email-address', outcome: 'flag' },
        'outcome',
        /omitted when templateId is given/,
      );
    });

    it('returns 400 naming each missing required field', async () => {
      const res = await ctx.post(POLICIES, { token: owner.token, body: {} });
      const error = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      const fields = (error.details as { field: string }[]).map((d) => d.field);
      expect(fields).toEqual(expect.arrayContaining(['name', 'outcome', 'conditions']));
    });

    it('returns 400 for an unknown body property', async () => {
      await expectRefused({ ...EMAIL_BLOCK, severity: 'high' }, 'severity', /should not exist/);
    });

    it('returns 400 for an outcome outside block and flag', async () => {
      await expectRefused({ ...EMAIL_BLOCK, outcome: 'approve' }, 'outcome', /block, flag/);
    });

    it('returns 400 for a priority out of range and for malformed agent ids', async () => {
      await expectRefused({ ...EMAIL_BLOCK, priority: 10_001 }, 'priority', /10000/);
      await expectRefused({ ...EMAIL_BLOCK, priority: -1 }, 'priority', /0/);
      await expectRefused({ ...EMAIL_BLOCK, agentIds: ['not-an-id'] }, 'agentIds', /24 lower-case hex/);
      await expectRefused(
        { ...EMAIL_BLOCK, agentIds: Array.from({ length: 101 }, (_, i) => fakeId(i + 1)) },
        'agentIds',
        /100/,
      );
    });

    it('returns 400 for an unknown condition field', async () => {
      await expectRefused(
        { ...EMAIL_BLOCK, conditions: [{ field: 'outputDecision.secret', operator: 'equals', value: 'x' }] },
        'conditions[0].field',
        /./,
      );
    });

    it('returns 400 for an unknown operator, naming the condition index', async () => {
      await expectRefused(
        {
          ...EMAIL_BLOCK,
          conditions: [
            { field: 'outputDecision.text', operator: 'contains', value: 'x' },
            { field: 'outputDecision.text', operator: 'resembles', value: 'x' },
          ],
        },
        'conditions[1].operator',
        /./,
      );
    });

    it('returns 400 for a bad RE2 pattern', async () => {
      await expectRefused(
        { ...EMAIL_BLOCK, conditions: [{ field: 'inputContext.prompt', operator: 'matches', value: '(a' }] },
        'conditions[0].value',
        /invalid RE2 pattern/,
      );
      // Back-references are not RE2: refused rather than run with backtracking.
      await expectRefused(
        {
          ...EMAIL_BLOCK,
          conditions: [{ field: 'inputContext.prompt', operator: 'matches', value: '(a)\\1' }],
        },
        'conditions[0].value',
        /invalid RE2 pattern/,
      );
    });

    it('returns 400 for a wrongly typed value', async () => {
      await expectRefused(
        { ...EMAIL_BLOCK, conditions: [{ field: 'confidence', operator: 'gt', value: 'high' }] },
        'conditions[0].value',
        /finite number/,
      );
      await expectRefused(
        { ...EMAIL_BLOCK, conditions: [{ field: 'outputDecision.text', operator: 'contains', value: 3 }] },
        'conditions[0].value',
        /string/,
      );
    });

    it('returns 400 for more than 20 conditions and for none', async () => {
      const many = Array.from({ length: 21 }, () => ({
        field: 'outputDecision.text',
        operator: 'contains',
        value: 'x',
      }));
      await expectRefused({ ...EMAIL_BLOCK, conditions: many }, 'conditions', /at most 20/);
      await expectRefused({ ...EMAIL_BLOCK, conditions: [] }, 'conditions', /at least one/);
      await expectRefused({ ...EMAIL_BLOCK, conditions: 'contains x' }, 'conditions', /array/);
    });

    it('writes policy.created to the audit log', async () => {
      const created = await create({ ...EMAIL_BLOCK, name: 'Audited create' });
      const entry = (await auditEntries(ctx, owner.token, 'policy.created')).find(
        (e) => e.targetId === created.id,
      );
      expect(entry).toMatchObject({
        eventType: 'policy.created',
        targetType: 'policy',
        actor: { type: 'user', id: owner.user.id },
        metadata: { name: 'Audited create', outcome: 'block', templateId: null, isActive: true },
      });
    });
  });

  describe('roles', () => {
    it('refuses every write to members and viewers with 403 FORBIDDEN', async () => {
      const created = await create({ ...EMAIL_BLOCK, name: 'Guarded' });
      for (const token of [member.token, viewer.token]) {
        expectErrorEnvelope(await ctx.post(POLICIES, { token, body: EMAIL_BLOCK }), 403, 'FORBIDDEN');
        expectErrorEnvelope(
          await ctx.post(POLICIES, { token, body: { templateId: 'email-address' } }),
          403,
          'FORBIDDEN',
        );
        expectErrorEnvelope(
          await ctx.patch(`${POLICIES}/${created.id}`, { token, body: { name: 'taken over' } }),
          403,
          'FORBIDDEN',
        );
        expectErrorEnvelope(
          await ctx.request('DELETE', `${POLICIES}/${created.id}`, { token }),
          403,
          'FORBIDDEN',
        );
      }
      const after = await ctx.get(`${POLICIES}/${created.id}`, { token: member.token });
      expect(after.statusCode).toBe(200);
      expect(after.json().data).toEqual(created);
    });
  });
});
