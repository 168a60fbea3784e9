import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildProgram } from '../apps/cli/src/cli.js';
import { AgentKeyResolver } from '../libs/governance/src/agents/agent-key.resolver.js';
import { EventStreamHub } from '../libs/governance/src/events/event-stream.hub.js';
import { AgentKeysRepository, ERASURE_BATCH } from '#identity';
import { memberships, organizations } from '../libs/identity/src/organizations/organization.schema.js';
import { invitations } from '../libs/identity/src/team/invitation.schema.js';
import { users } from '../libs/identity/src/users/user.schema.js';
import { alertRules } from '../libs/compliance/src/alerts/alert.schema.js';
import { scheduledReports } from '../libs/compliance/src/reports/scheduled-report.schema.js';
import { ReportSchedulerJob } from '../libs/compliance/src/reports/report-scheduler.job.js';
import { JobScheduler, newId, SCHEMA_VERSIONS, TransactionHost, verifyExportedChain } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { auditEntriesOf } from './support/audit-entries.js';
import { replicaHandle } from './support/database.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const ORG = '/api/v1/organizations/current';
const OTLP = '/api/v1/otel/v1/traces';
const START = '2026-06-01T12:00:00.000Z';
const DAY = 86_400_000;
const INVITE_TOKEN = 'k'.repeat(43);
const VALIDATE = `/api/v1/team/invites/validate/${INVITE_TOKEN}`;

interface ExportedLine {
  export?: { organizationId: string; format: number; tables: string[] };
  table?: string;
  record: Record<string, unknown> & { metadata?: Record<string, unknown> };
}

describe('organization deletion', () => {
  let ctx: TestContext;
  let owner: Registered;
  let bystander: Registered;
  let admin: { userId: string; token: string };
  let member: { userId: string; token: string };
  let viewer: { userId: string; token: string };
  /** A member of the bystanding organization who also belonged to the deleted one (oldest membership there). */
  let both: { userId: string; email: string; token: string };
  let agent: TestAgent;
  let bystanderAgent: TestAgent;
  let workspaceKey: string;
  let dir: string;
  /** An alert rule and a scheduled report of the organization, due when it is deleted. */
  let alertId: string;
  let reportId: string;

  const orgId = () => owner.organization.id;
  const cli = (printed: unknown[] = []) =>
    buildProgram(
      (fn) => fn(ctx.app),
      (value) => printed.push(value),
    );
  const ingest = (key: string) => ctx.post(TRACES, { apiKey: key, body: traceBody() });
  const otlp = (key: string) =>
    ctx.post(OTLP, {
      apiKey: key,
      payload: JSON.stringify({ resourceSpans: [] }),
      headers: { 'content-type': 'application/json' },
    });

  /** Every table with an organization_id column (the catalogue, as erasure and export read it). */
  async function organizationTables(): Promise<string[]> {
    const result = await ctx.db.db.execute(sql`select table_name from information_schema.columns
      where table_schema = current_schema() and column_name = 'organization_id' order by table_name`);
    return (result as unknown as { rows: { table_name: string }[] }).rows.map((r) => r.table_name);
  }
  /** Rows of the organization in each of those tables (and its organizations row). */
  async function rowCounts(organizationId: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of await organizationTables()) {
      const column = table === 'organizations' ? 'id' : 'organization_id';
      const result = await ctx.db.db.execute(
        sql`select count(*)::int as n from ${sql.identifier(table)} where ${sql.identifier(column)} = ${organizationId}`,
      );
      counts[table] = (result as unknown as { rows: { n: number }[] }).rows[0]!.n;
    }
    return counts;
  }
  async function organizationRow() {
    const [row] = await ctx.db.db.select().from(organizations).where(eq(organizations.id, orgId()));
    return row;
  }
  async function deleteOrganization() {
    const res = await ctx.delete(ORG, { token: owner.token, body: { confirmName: 'Doomed Ltd' } });
    expect(res.statusCode, res.body).toBe(202);
    return res.json().data as { id: string; name: string; deletedAt: string; eraseAfter: string };
  }
  async function exportTo(file: string): Promise<string[]> {
    const printed: unknown[] = [];
    await cli(printed).parseAsync(['node', 'cli', 'org:export', orgId(), file]);
    expect(printed[0]).toMatchObject({ organizationId: orgId(), file });
    return readFileSync(file, 'utf8').trimEnd().split('\n');
  }

  beforeAll(async () => {
    ctx = await TestContext.create({ now: START, config: { workers: false } });
    dir = mkdtempSync(join(tmpdir(), 'org-export-'));
    owner = await ctx.register({ organizationName: 'Doomed Ltd' });
    bystander = await ctx.register({ organizationName: 'Bystanders' });
    admin = await ctx.addMember(orgId(), 'admin');
    member = await ctx.addMember(orgId(), 'member');
    viewer = await ctx.addMember(orgId(), 'viewer');
    both = await ctx.addMember(bystander.organization.id, 'member');
    const earlier = new Date(ctx.clock.nowMs() - DAY);
    await ctx.db.db.insert(memberships).values({
      id: newId(),
      organizationId: orgId(),
      userId: both.userId,
      role: 'member',
      isActive: true,
      createdAt: earlier,
      updatedAt: earlier,
    });
    agent = await ctx.newAgent(orgId(), 'Support bot');
    bystanderAgent = await ctx.newAgent(bystander.organization.id, 'Their bot');
    await ctx.newPolicy(orgId(), {
      name: 'Low confidence',
      outcome: 'flag',
      conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }],
    });
    const key = await ctx.post('/api/v1/auth/keys', { token: owner.token, body: { name: 'CI' } });
    expect(key.statusCode, key.body).toBe(201);
    workspaceKey = key.json().data.key;
    const invite = await ctx.post('/api/v1/team/invite', {
      token: owner.token,
      body: { email: 'later@example.com', role: 'member' },
    });
    expect(invite.statusCode, invite.body).toBe(201);
    // The token is only mailed: give the invitation one the test knows.
    await ctx.db.db
      .update(invitations)
      .set({ tokenHash: createHash('sha256').update(INVITE_TOKEN).digest('hex') })
      .where(eq(invitations.organizationId, orgId()));
    expect((await ctx.get(VALIDATE)).json().data).toMatchObject({
      valid: true,
      organizationName: 'Doomed Ltd',
    });
    for (const confidence of [0.9, 0.3]) {
      const res = await ctx.post(TRACES, { apiKey: agent.key, body: traceBody({ confidence }) });
      expect([201, 202], res.body).toContain(res.statusCode);
    }
    // More traces than one erasure batch, written with SQL (ingestion has its own suites).
    const at = new Date(ctx.clock.nowMs() - DAY).toISOString();
    for (const [organizationId, agentId, n] of [
      [orgId(), agent.id, ERASURE_BATCH * 2 + 5],
      [bystander.organization.id, bystanderAgent.id, 30],
    ] as const) {
      await ctx.db.db.execute(sql`insert into traces (id, organization_id, agent_id, status, confidence,
          input_context, output_decision, metadata, schema_version, search_text, created_at, updated_at)
        select substr(md5(${agentId} || g::text), 1, 24), ${organizationId}, ${agentId}, 'approved', 0.9,
          '{}'::jsonb, '{}'::jsonb, '{}'::jsonb, ${SCHEMA_VERSIONS[0]!.version}, '', ${at}::timestamptz,
          ${at}::timestamptz
        from generate_series(1, ${n}) g`);
    }
    expect((await ingest(bystanderAgent.key)).statusCode).toBe(201);
    const alert = await ctx.post('/api/v1/alerts', {
      token: owner.token,
      body: { name: 'Volume', metric: 'trace_volume', comparison: 'gt', threshold: 0, windowMinutes: 10_080 },
    });
    expect(alert.statusCode, alert.body).toBe(201);
    alertId = alert.json().data.id;
    // Scheduled reports need the Governance plan; the row is written directly so the plan stays as it is.
    reportId = newId();
    await ctx.db.db.insert(scheduledReports).values({
      id: reportId,
      organizationId: orgId(),
      name: 'Weekly',
      frequency: 'weekly',
      recipients: ['board@example.com'],
      includeMetrics: true,
      includeTopAgents: true,
      includeAlerts: true,
      includeLowConf: false,
      isActive: true,
      nextSendAt: ctx.clock.now(),
      createdAt: ctx.clock.now(),
      updatedAt: ctx.clock.now(),
    });
  });
  afterAll(async () => ctx?.close());

  it('refuses a wrong or missing confirmation with 400, and nothing changes', async () => {
    const before = await rowCounts(orgId());
    for (const body of [
      { confirmName: 'doomed ltd' },
      { confirmName: 'Doomed Ltd ' },
      {},
      { confirmName: 7 },
    ]) {
      const res = await ctx.delete(ORG, { token: owner.token, body });
      const error = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect((error.details as { field: string }[]).map((d) => d.field)).toContain('confirmName');
    }
    expect((await organizationRow())?.deletedAt).toBeNull();
    expect(await auditEntriesOf(ctx, orgId(), 'organization.delete_requested')).toEqual([]);
    expect(await rowCounts(orgId())).toEqual(before);
    expect((await ctx.get(ORG, { token: owner.token })).statusCode).toBe(200);
  });

  it('is for the owner only: admin, member and viewer get 403, and a workspace key cannot', async () => {
    const body = { confirmName: 'Doomed Ltd' };
    for (const token of [admin.token, member.token, viewer.token]) {
      expectErrorEnvelope(await ctx.delete(ORG, { token, body }), 403, 'FORBIDDEN');
    }
    expectErrorEnvelope(await ctx.delete(ORG, { apiKey: workspaceKey, body }), 403, 'FORBIDDEN');
    expect((await organizationRow())?.deletedAt).toBeNull();
  });

  it('ends every session and key of the organization at once, on every replica', async () => {
    // Warm what caches credentials: this process's agent-key cache, and another replica's with a day of TTL.
    expect((await ingest(agent.key)).statusCode).toBe(201);
    expect((await otlp(agent.key)).statusCode).toBe(200);
    expect((await ctx.get('/api/v1/agents', { apiKey: workspaceKey })).statusCode).toBe(200);
    // An open event stream, and a stream token minted before the deletion.
    const hub = ctx.service(EventStreamHub);
    const closed: string[] = [];
    const stream = await hub.subscribe(
      { organizationId: orgId(), userId: member.userId },
      {
        transport: 'sse',
        write: () => true,
        heartbeat: () => undefined,
        close: (reason) => closed.push(reason),
      },
      undefined,
    );
    const streamToken = (await ctx.post('/api/v1/auth/stream-token', { token: member.token })).json().data
      .token as string;
    const { handle, close } = await replicaHandle(ctx.db);
    const replicaTx = new TransactionHost(handle);
    const replica = new AgentKeyResolver(new AgentKeysRepository(replicaTx), replicaTx, handle, {
      ttlMs: 86_400_000,
    });
    await replica.onModuleInit();
    try {
      expect(await replica.resolveKey(agent.key)).toMatchObject({ organizationId: orgId() });

      const deleted = await deleteOrganization();
      expect(deleted).toEqual({
        id: orgId(),
        name: 'Doomed Ltd',
        deletedAt: START,
        eraseAfter: new Date(Date.parse(START) + 30 * DAY).toISOString(),
      });
      const [entry] = await auditEntriesOf(ctx, orgId(), 'organization.delete_requested');
      expect(entry).toMatchObject({
        userId: owner.user.id,
        metadata: { name: 'Doomed Ltd', graceDays: 30, eraseAfter: deleted.eraseAfter },
      });

      for (const token of [owner.token, admin.token, member.token, viewer.token]) {
        expectErrorEnvelope(await ctx.get(ORG, { token }), 401, 'UNAUTHORIZED');
        expectErrorEnvelope(await ctx.get('/api/v1/auth/me', { token }), 401, 'UNAUTHORIZED');
      }
      expectErrorEnvelope(await ctx.get('/api/v1/agents', { apiKey: workspaceKey }), 401, 'UNAUTHORIZED');
      expectErrorEnvelope(await ingest(agent.key), 401, 'UNAUTHORIZED');
      expectErrorEnvelope(await otlp(agent.key), 401, 'UNAUTHORIZED');
      expectErrorEnvelope(await ctx.get('/api/v1/agents', { apiKey: agent.key }), 401, 'UNAUTHORIZED');
      expect((await ctx.get(VALIDATE)).json().data).toMatchObject({ valid: false });
      expect(closed).toEqual(['revoked']);
      expect(stream.closed).toBe(true);
      await expect(hub.authenticate(streamToken)).rejects.toMatchObject({ status: 401 });
      await vi.waitFor(async () => expect(await replica.resolveKey(agent.key)).toBeNull(), {
        timeout: 5000,
        interval: 20,
      });
      // A second request cannot delete it again: the owner's session is gone.
      expectErrorEnvelope(
        await ctx.delete(ORG, { token: owner.token, body: { confirmName: 'Doomed Ltd' } }),
        401,
        'UNAUTHORIZED',
      );
    } finally {
      await replica.onModuleDestroy();
      await close();
    }
    // The other organization goes on.
    expect((await ingest(bystanderAgent.key)).statusCode).toBe(201);
    expect((await ctx.get(ORG, { token: bystander.token })).statusCode).toBe(200);
  });

  it('neither evaluates its alert rules nor sends its scheduled reports while it is deleted', async () => {
    const scheduler = ctx.service(JobScheduler);
    await scheduler.runNow('alerts');
    // Without a mail server a claimed report would fail to send: failed 0 says it was not claimed at all.
    expect(await ctx.service(ReportSchedulerJob).tick()).toEqual({ sent: 0, failed: 0 });
    const [rule] = await ctx.db.db.select().from(alertRules).where(eq(alertRules.id, alertId));
    expect(rule).toMatchObject({ state: 'ok', lastEvaluatedAt: null, lastValue: null });
    expect(rule!.nextEvaluationAt.getTime()).toBeLessThanOrEqual(ctx.clock.nowMs());
    const [report] = await ctx.db.db.select().from(scheduledReports).where(eq(scheduledReports.id, reportId));
    expect(report).toMatchObject({ claimedUntil: null, sentCount: 0, lastSentAt: null });
  });

  it('refuses the login of a user of the deleted organization only, and logs others into another one', async () => {
    const refused = await ctx.post('/api/v1/auth/login', {
      body: { email: owner.user.email, password: owner.password },
    });
    expectErrorEnvelope(refused, 401, 'ORGANIZATION_DELETED');
    const token = await ctx.login(both.email);
    const me = await ctx.get(ORG, { token });
    expect(me.json().data.id).toBe(bystander.organization.id);
    const orgs = await ctx.get('/api/v1/auth/me/orgs', { token });
    expect(orgs.json().data.map((o: { organizationId: string }) => o.organizationId)).toEqual([
      bystander.organization.id,
    ]);
    const switched = await ctx.post('/api/v1/auth/switch-org', { token, body: { organizationId: orgId() } });
    expectErrorEnvelope(switched, 404, 'NOT_FOUND');
  });

  it('exports every record of the deleted organization as NDJSON whose audit chain verifies offline', async () => {
    const file = join(dir, 'doomed.ndjson');
    // An existing file is neither overwritten nor removed.
    const existing = join(dir, 'existing.ndjson');
    writeFileSync(existing, 'keep me\n');
    await expect(cli().parseAsync(['node', 'cli', 'org:export', orgId(), existing])).rejects.toThrow(
      /EEXIST/,
    );
    expect(readFileSync(existing, 'utf8')).toBe('keep me\n');
    const lines = await exportTo(file);
    const parsed = lines.map((line) => JSON.parse(line) as ExportedLine);
    const header = parsed[0]!.export!;
    expect(header).toMatchObject({ organizationId: orgId(), format: 1 });
    const expectedTables = (await organizationTables()).filter((t) => t !== 'organizations');
    expect(header.tables).toEqual(expect.arrayContaining(['organizations', 'users', ...expectedTables]));

    const counts: Record<string, number> = {};
    for (const line of parsed.slice(1, -1)) counts[line.table!] = (counts[line.table!] ?? 0) + 1;
    const stored = await rowCounts(orgId());
    for (const [table, n] of Object.entries(stored)) expect(counts[table] ?? 0, table).toBe(n);
    expect(counts.traces).toBe(ERASURE_BATCH * 2 + 5 + 3);
    expect(counts.users).toBe(5);
    for (const table of ['memberships', 'agents', 'api_keys', 'policies', 'review_items', 'invitations']) {
      expect(counts[table], table).toBeGreaterThan(0);
    }
    // The invitation's mail is the organization's too: exported, then erased with it.
    expect(parsed.some((line) => line.table === 'outbox_messages' && line.record.topic === 'mail.send')).toBe(
      true,
    );
    const usersLines = parsed.filter((line) => line.table === 'users');
    expect(Object.keys(usersLines[0]!.record).sort()).toEqual([
      'created_at',
      'email',
      'id',
      'is_active',
      'name',
    ]);

    const audit = parsed.filter((line) => line.table === 'audit_entries').map((line) => line.record);
    expect(audit.map((r) => r.sequence)).toEqual(audit.map((_, i) => i + 1));
    expect(audit.at(-1)).toMatchObject({ event_type: 'organization.delete_requested' });
    const result = verifyExportedChain(lines);
    expect(result).toMatchObject({ valid: true, entries: audit.length, organizationId: orgId() });
    expect(result.head).toBe(audit.at(-1)!.hash);

    const printed: unknown[] = [];
    await cli(printed).parseAsync(['node', 'cli', 'audit:verify-export', file]);
    expect(printed[0]).toMatchObject({ valid: true, entries: audit.length });

    // A line altered after the export: its hash no longer matches, and the CLI says so.
    const index = parsed.findIndex((line) => line.table === 'audit_entries' && line.record.sequence === 2);
    const tampered = [...lines];
    const line = structuredClone(parsed[index]!);
    line.record.metadata = { ...line.record.metadata, forged: true };
    tampered[index] = JSON.stringify(line);
    expect(verifyExportedChain(tampered)).toMatchObject({
      valid: false,
      entries: 1,
      brokenAt: { line: index + 1, sequence: 2, reason: 'hash does not match the entry' },
    });
    const removed = lines.filter((_, i) => i !== index);
    expect(verifyExportedChain(removed)).toMatchObject({ valid: false, brokenAt: { sequence: 3 } });
    // The end line closes the file: cut short, or a trace line removed, the export no longer verifies.
    const end = parsed.at(-1) as unknown as { end: { records: Record<string, number>; audit: unknown } };
    expect(end.end.records.traces).toBe(counts.traces);
    expect(end.end.audit).toEqual({ entries: audit.length, head: audit.at(-1)!.hash });
    expect(verifyExportedChain(lines.slice(0, -1))).toMatchObject({
      valid: false,
      brokenAt: { reason: 'no end line: the export is cut short' },
    });
    const traceLine = parsed.findIndex((line) => line.table === 'traces');
    expect(verifyExportedChain(lines.filter((_, i) => i !== traceLine))).toMatchObject({
      valid: false,
      brokenAt: { reason: 'the end line counts other records of traces than the file holds' },
    });
    const tamperedFile = join(dir, 'tampered.ndjson');
    writeFileSync(tamperedFile, tampered.join('\n') + '\n');
    const afterTamper: unknown[] = [];
    const exitCode = process.exitCode;
    await cli(afterTamper).parseAsync(['node', 'cli', 'audit:verify-export', tamperedFile]);
    expect(afterTamper[0]).toMatchObject({ valid: false, brokenAt: { line: index + 1 } });
    expect(process.exitCode).toBe(2);
    process.exitCode = exitCode;
  });

  it('restores within the grace through the CLI: the same sessions and keys work again', async () => {
    // Within the grace and within the sessions' lifetime (7 days).
    ctx.clock.advance(5 * DAY);
    // Not yet due: the erasure job leaves it alone.
    await ctx.service(JobScheduler).runNow('organization-erasure');
    expect(await organizationRow()).toBeDefined();

    const printed: unknown[] = [];
    await cli(printed).parseAsync(['node', 'cli', 'org:restore', orgId()]);
    expect(printed[0]).toMatchObject({ id: orgId(), name: 'Doomed Ltd' });
    expect(await organizationRow()).toMatchObject({ deletedAt: null, eraseAfter: null });
    expect((await ctx.get(ORG, { token: owner.token })).statusCode).toBe(200);
    expect((await ctx.get(ORG, { token: member.token })).statusCode).toBe(200);
    expect((await ctx.get('/api/v1/agents', { apiKey: workspaceKey })).statusCode).toBe(200);
    expect((await ingest(agent.key)).statusCode).toBe(201);
    const [restored] = await auditEntriesOf(ctx, orgId(), 'organization.restored');
    expect(restored).toMatchObject({ actor: { type: 'system', id: 'cli' } });
    // Restoring an organization that is not deleted is refused.
    await expect(cli().parseAsync(['node', 'cli', 'org:restore', orgId()])).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
  });

  it('erases every row of the organization after the grace, and nothing of another one', async () => {
    const deleted = await deleteOrganization();
    const bystanderBefore = await rowCounts(bystander.organization.id);
    const bothBefore = await ctx.db.db.select().from(users).where(eq(users.id, both.userId));

    ctx.clock.set(new Date(Date.parse(deleted.eraseAfter) + 1000));
    await expect(cli().parseAsync(['node', 'cli', 'org:restore', orgId()])).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining('grace period ended'),
    });

    await ctx.service(JobScheduler).runNow('organization-erasure');

    const after = await rowCounts(orgId());
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
    expect(await organizationRow()).toBeUndefined();
    // Users of this organization only are erased with it; a member of another organization keeps the account.
    const remaining = await ctx.db.db
      .select({ id: users.id })
      .from(users)
      .where(
        sql`${users.id} in (${sql.join(
          [owner.user.id, admin.userId, member.userId, viewer.userId, both.userId].map((id) => sql`${id}`),
          sql`, `,
        )})`,
      );
    expect(remaining.map((u) => u.id)).toEqual([both.userId]);
    expect(
      await ctx.db.db
        .select()
        .from(memberships)
        .where(
          and(eq(memberships.userId, both.userId), eq(memberships.organizationId, bystander.organization.id)),
        ),
    ).toHaveLength(1);
    expect(await ctx.db.db.select().from(users).where(eq(users.id, both.userId))).toEqual(bothBefore);
    expect(await rowCounts(bystander.organization.id)).toEqual(bystanderBefore);
    const bystanderToken = await ctx.login(bystander.user.email);
    const verify = await ctx.get('/api/v1/audit/verify', { token: bystanderToken });
    expect(verify.json().data).toMatchObject({ valid: true });
    expect((await ingest(bystanderAgent.key)).statusCode).toBe(201);

    // Gone for the operator too.
    await expect(cli().parseAsync(['node', 'cli', 'org:restore', orgId()])).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(
      cli().parseAsync(['node', 'cli', 'org:export', orgId(), join(dir, 'gone.ndjson')]),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expectErrorEnvelope(
      await ctx.post('/api/v1/auth/login', { body: { email: owner.user.email, password: owner.password } }),
      401,
      'INVALID_CREDENTIALS',
    );
  });
});
