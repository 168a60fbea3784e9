import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExportLine, OrganizationExportService } from '#identity';
import { verifyExportedChain } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import type { TestAgent } from './support/builders.js';
import { TRACES, traceBody } from './support/traces-suite.js';

type Row = { [key: string]: unknown };

/** The organization export is one snapshot: what commits while it streams is in none of its tables. */
describe('organization export snapshot', () => {
  let ctx: TestContext;
  let owner: Registered;
  let agent: TestAgent;

  const orgId = () => owner.organization.id;
  const exporter = () => ctx.app.get(OrganizationExportService);
  const ingest = async (prompt: string) => {
    const res = await ctx.post(TRACES, { apiKey: agent.key, body: traceBody({}, { prompt }) });
    expect(res.statusCode, res.body).toBe(201);
  };
  async function rest(lines: AsyncGenerator<ExportLine>): Promise<ExportLine[]> {
    const out: ExportLine[] = [];
    for await (const line of lines) out.push(line);
    return out;
  }
  const records = (lines: ExportLine[], table: string): Row[] =>
    lines.flatMap((line) => ('table' in line && line.table === table ? [line.record] : []));
  const prompts = (lines: ExportLine[]) =>
    records(lines, 'traces').map((r) => (r.input_context as { prompt: string }).prompt);

  beforeAll(async () => {
    ctx = await TestContext.create({ config: { workers: false } });
    owner = await ctx.register({ organizationName: 'Snapshot Ltd' });
    agent = await ctx.newAgent(orgId(), 'Exported bot');
    await ingest('Before the export 1');
    await ingest('Before the export 2');
  });
  afterAll(async () => ctx?.close());

  it('leaves out a trace, its audit entry, a member and their sign-in committed while it streams; a fresh export has them', async () => {
    const stream = exporter().lines(orgId());
    // The header comes once the organization and the catalogue are read: the snapshot is taken.
    const header = await stream.next();
    expect(header.value).toMatchObject({ export: { organizationId: orgId() } });

    const writes = (async () => {
      await ingest('Written during the export');
      return ctx.addMember(orgId(), 'member');
    })();
    // On PostgreSQL the writes commit before the export reads a single table. PGlite has one session: they wait
    // for the export's transaction, and are in no table of it either.
    const committedFirst = ctx.db.driver === 'postgres' ? await writes : undefined;
    const during = [header.value as ExportLine, ...(await rest(stream))];
    const newcomer = committedFirst ?? (await writes);

    expect(prompts(during).sort()).toEqual(['Before the export 1', 'Before the export 2']);
    const traceIds = records(during, 'traces').map((r) => r.id);
    // Each trace has its audit entry in the same snapshot, and the chain ends where the snapshot did.
    const traceEntries = records(during, 'audit_entries').filter((r) => r.target_type === 'trace');
    expect(traceEntries.map((r) => r.target_id).sort()).toEqual([...traceIds].sort());
    for (const table of ['users', 'memberships', 'sessions', 'login_events']) {
      expect(
        records(during, table).some((r) => r.id === newcomer.userId || r.user_id === newcomer.userId),
        table,
      ).toBe(false);
    }
    const chain = verifyExportedChain(during.map((line) => JSON.stringify(line)));
    expect(chain).toMatchObject({ valid: true, entries: records(during, 'audit_entries').length });
    const end = during.at(-1) as { end: { records: { [table: string]: number } } };
    expect(end.end.records.traces).toBe(2);

    const fresh = await rest(exporter().lines(orgId()));
    expect(prompts(fresh).sort()).toEqual([
      'Before the export 1',
      'Before the export 2',
      'Written during the export',
    ]);
    for (const table of ['users', 'memberships', 'sessions', 'login_events']) {
      expect(
        records(fresh, table).some((r) => r.id === newcomer.userId || r.user_id === newcomer.userId),
        table,
      ).toBe(true);
    }
    expect(records(fresh, 'audit_entries').length).toBeGreaterThan(records(during, 'audit_entries').length);
    expect(verifyExportedChain(fresh.map((line) => JSON.stringify(line)))).toMatchObject({ valid: true });
  });

  it('ends its transaction when the consumer stops early or the organization is unknown: writes go on', async () => {
    for await (const line of exporter().lines(orgId())) {
      expect(line).toHaveProperty('export');
      break;
    }
    await ingest('After an abandoned export');
    await expect(rest(exporter().lines('000000000000000000000000'))).rejects.toMatchObject({ status: 404 });
    await ingest('After a refused export');
    expect(prompts(await rest(exporter().lines(orgId())))).toEqual(
      expect.arrayContaining(['After an abandoned export', 'After a refused export']),
    );
  });
});
