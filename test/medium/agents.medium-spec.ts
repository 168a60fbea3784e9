import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, auditEntries, SCHEMA_VERSIONS } from '#platform';
import { AgentKeyResolver } from '../../libs/governance/src/agents/agent-key.resolver.js';
import { AgentsService } from '../../libs/governance/src/agents/agents.service.js';
import { TraceIngestPipeline } from '../../libs/governance/src/traces/trace-ingest.pipeline.js';
import { validateTraceIngest } from '../../libs/governance/src/traces/trace-ingest.validation.js';
import { TEST_META, type TestOrganization } from '../support/builders.js';
import { MediumContext } from '../support/medium.js';

/** What listings and audit entries show of a key: `svc_agent_` and its first 12 random characters. */
const prefixOf = (key: string) => key.slice(0, 'svc_agent_'.length + 12);

describe('AgentsService with its repositories and identity’s agent keys', () => {
  let ctx: MediumContext;
  let org: TestOrganization;
  let other: TestOrganization;
  let agents: AgentsService;
  let resolver: AgentKeyResolver;

  beforeAll(async () => {
    ctx = await MediumContext.create();
    org = await ctx.newOrganization({ organizationName: 'Agents Org' });
    other = await ctx.newOrganization({ organizationName: 'Other Org' });
    agents = ctx.service(AgentsService);
    resolver = ctx.service(AgentKeyResolver);
  });

  afterAll(async () => ctx?.close());

  async function auditOf(organizationId: string, targetId: string) {
    return ctx.db.db
      .select({ eventType: auditEntries.eventType, metadata: auditEntries.metadata })
      .from(auditEntries)
      .where(and(eq(auditEntries.organizationId, organizationId), eq(auditEntries.targetId, targetId)))
      .orderBy(auditEntries.sequence);
  }

  it('creates an agent whose key resolves to the agent, and audits it with the key prefix', async () => {
    const agent = await ctx.newAgent(org.id, 'Support bot');
    const actor = await resolver.resolveKey(agent.key);
    expect(actor).toMatchObject({
      credential: 'agentKey',
      organizationId: org.id,
      agentId: agent.id,
      scope: { agentIds: [agent.id] },
    });
    const [created] = await auditOf(org.id, agent.id);
    expect(created).toMatchObject({ eventType: 'agent.created', metadata: { name: 'Support bot' } });
    expect((created!.metadata as { keyPrefix: string }).keyPrefix).toBe(prefixOf(agent.key));
  });

  it('lists agents with the prefix of their live key, read from the api-keys module', async () => {
    const agent = await ctx.newAgent(org.id, 'Listed');
    const page = await agents.list(org.owner, { page: 1, limit: 100 });
    const listed = page.items.find((a) => a.id === agent.id);
    expect(listed).toMatchObject({ name: 'Listed', keyPrefix: prefixOf(agent.key) });
    expect(page.pagination.total).toBe(page.items.length);
  });

  it('regenerates the key: the old one stops resolving at commit, the new one carries the same scope', async () => {
    const agent = await ctx.newAgent(org.id, 'Rotating');
    expect(await resolver.resolveKey(agent.key)).not.toBeNull();
    const { apiKey } = await agents.regenerateKey(org.owner, agent.id, TEST_META);
    expect(await resolver.resolveKey(agent.key)).toBeNull();
    expect(await resolver.resolveKey(apiKey)).toMatchObject({
      agentId: agent.id,
      scope: { agentIds: [agent.id] },
    });
    const events = await auditOf(org.id, agent.id);
    expect(events.map((e) => e.eventType)).toEqual(['agent.created', 'agent.key_regenerated']);
    expect(events[1]!.metadata).toMatchObject({ revokedKeyPrefixes: [prefixOf(agent.key)] });
  });

  it('removes the agent and revokes its key in one transaction; the audit names the revoked prefix', async () => {
    const agent = await ctx.newAgent(org.id, 'Doomed');
    await agents.remove(org.owner, agent.id, TEST_META);
    expect(await resolver.resolveKey(agent.key)).toBeNull();
    await expect(agents.get(org.owner, agent.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const events = await auditOf(org.id, agent.id);
    expect(events.at(-1)).toMatchObject({
      eventType: 'agent.deleted',
      metadata: { name: 'Doomed', revokedKeyPrefixes: [prefixOf(agent.key)] },
    });
  });

  it('shows the trace counts the traces module gives it, for traces stored through the ingest pipeline', async () => {
    const agent = await ctx.newAgent(org.id, 'Counted');
    const pipeline = ctx.service(TraceIngestPipeline);
    const version = SCHEMA_VERSIONS[0]!;
    const input = validateTraceIngest(
      {
        inputContext: { prompt: 'What is the refund window?' },
        outputDecision: { action: 'answer', text: 'Thirty days.' },
        confidence: 0.8,
      },
      version.limits,
    );
    const writes = await Promise.all(
      [0, 1].map(() =>
        pipeline.prepare(org.owner, agent.id, input, { schemaVersion: version, meta: TEST_META }),
      ),
    );
    await Promise.all(pipeline.store(org.id, writes));
    const detail = await agents.get(org.owner, agent.id);
    expect(detail.analytics).toMatchObject({
      totalTraces: 2,
      byStatus: { approved: 2, flagged: 0, blocked: 0 },
    });
  });

  it('is the AgentDirectory: ids of another organization or deleted agents are unknown', async () => {
    const mine = await ctx.newAgent(org.id, 'Mine');
    const theirs = await ctx.newAgent(other.id, 'Theirs');
    const gone = await ctx.newAgent(org.id, 'Gone');
    await agents.remove(org.owner, gone.id, TEST_META);
    expect(await agents.unknownIds(org.id, [mine.id, theirs.id, gone.id])).toEqual([theirs.id, gone.id]);
  });

  it('refuses to show or change an agent of another organization, as if it did not exist', async () => {
    const theirs = await ctx.newAgent(other.id, 'Not yours');
    const attempt = agents.remove(org.owner, theirs.id, TEST_META);
    await expect(attempt).rejects.toBeInstanceOf(AppError);
    await expect(attempt).rejects.toMatchObject({ status: 404 });
    expect(await resolver.resolveKey(theirs.key)).not.toBeNull();
  });
});
