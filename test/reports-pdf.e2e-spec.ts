import { desc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppConfig } from '#platform';
import { auditEntries } from '../libs/platform/src/audit/audit.schema.js';
import type { Browser } from 'puppeteer-core';
import { PdfRenderer } from '../libs/compliance/src/reports/pdf-renderer.js';
import { type Registered, TestContext, testConfig } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import type { TestAgent } from './support/builders.js';
import { insertFria, patchMapping } from './support/compliance-suite.js';
import { pdfText } from './support/pdf.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const REPORT = '/api/v1/reports/compliance';
const START = '2026-03-01T12:00:00.000Z';
const DAY = 86_400_000;

describe('the compliance PDF', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let agent: TestAgent;
  let viewer: { token: string };
  let generatedAt: Date;

  beforeAll(async () => {
    ctx = await TestContext.create({ now: START });
    owner = await ctx.register({ organizationName: 'Acme Lending' });
    await ctx.setPlan(owner.organization.id, 'governance');
    other = await ctx.register({ organizationName: 'Elsewhere Bank' });
    agent = await ctx.newAgent(owner.organization.id, 'Credit assistant');
    const otherAgent = await ctx.newAgent(other.organization.id, 'Other agent');
    await ctx.newPolicy(owner.organization.id, {
      name: 'No card numbers',
      outcome: 'block',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'card number' }],
    });
    await ctx.newPolicy(owner.organization.id, {
      name: 'Low confidence review',
      outcome: 'flag',
      conditions: [{ field: 'confidence', operator: 'lt', value: 0.7 }],
    });
    await ctx.newPolicy(owner.organization.id, {
      name: 'Never matches',
      outcome: 'flag',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'zzz-unused' }],
    });
    const send = async (key: string, body: Record<string, unknown>) => {
      const res = await ctx.post(TRACES, { apiKey: key, body });
      expect([201, 202, 403], res.body).toContain(res.statusCode);
    };
    // 40 days before the report: outside its default 30-day period.
    await send(agent.key, traceBody({ confidence: 0.95 }));
    ctx.clock.advance(40 * DAY);
    // Sessions of 40 days ago have expired.
    owner = { ...owner, token: await ctx.login(owner.user.email) };
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    // In the period: 3 approved (0.9), 2 flagged (0.6 and 0.5), 1 blocked (0.8).
    for (let i = 0; i < 3; i++) await send(agent.key, traceBody({ confidence: 0.9 }));
    await send(agent.key, traceBody({ confidence: 0.6 }));
    await send(agent.key, traceBody({ confidence: 0.5 }));
    await send(
      agent.key,
      traceBody({ confidence: 0.8 }, { prompt: 'My card number is 4111 1111 1111 1111' }),
    );
    // Another organization's traces count nowhere here.
    for (let i = 0; i < 4; i++) await send(otherAgent.key, traceBody({ confidence: 0.1 }));

    const incident = (body: Record<string, unknown>) =>
      ctx.post('/api/v1/incidents', { token: owner.token, body });
    const now = ctx.clock.now().getTime();
    expect(
      (
        await incident({
          title: 'Wrongful loan refusal',
          category: 'death',
          awareAt: new Date(now - DAY).toISOString(),
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (
        await incident({
          title: 'Scoring outage',
          category: 'critical_infrastructure',
          awareAt: new Date(now - 3 * DAY).toISOString(),
        })
      ).statusCode,
    ).toBe(201);
    const mapped = await patchMapping(ctx, owner.token, {
      framework: 'iso-42001',
      clauseId: '6.1.4',
      status: 'covered',
      evidence: 'FRIA for the credit model.',
    });
    expect(mapped.statusCode, mapped.body).toBe(200);
    await insertFria(ctx, owner.organization.id);
    // The period ends (exclusive) at the request's instant; a minute on, everything above is inside it.
    ctx.clock.advance(60_000);
    generatedAt = ctx.clock.now();
  });
  afterAll(async () => ctx?.close());

  it('is a PDF attachment with a title, a language and numbered pages', async () => {
    const res = await ctx.get(REPORT, { token: owner.token });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe(
      'attachment; filename="compliance-report-2026-03-11-to-2026-04-10.pdf"',
    );
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.rawPayload;
    expect(body.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(Number(res.headers['content-length'])).toBe(body.length);
    const pdf = await pdfText(body);
    expect(pdf.title).toBe('Compliance report: Acme Lending');
    expect(pdf.language).toBe('en');
    expect(pdf.pages.length).toBeGreaterThan(2);
    pdf.pages.forEach((page, i) => expect(page).toContain(`Page ${i + 1} of ${pdf.pages.length}`));
  });

  it('shows the organization’s figures in the order of "The compliance PDF" in docs/compliance-officers.md', async () => {
    const res = await ctx.get(REPORT, { token: viewer.token });
    expect(res.statusCode).toBe(200);
    const { text, pages } = await pdfText(res.rawPayload);
    if (process.env.PDF_DUMP) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(process.env.PDF_DUMP, res.rawPayload);
      writeFileSync(`${process.env.PDF_DUMP}.txt`, pages.join('\n\n'));
    }
    // Cover.
    expect(pages[0]).toContain('Compliance report');
    expect(pages[0]).toContain('Acme Lending');
    expect(pages[0]).toContain('Period 2026-03-11 12:01 UTC to 2026-04-10 12:01 UTC');
    expect(pages[0]).toContain(
      `Generated at ${generatedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    );
    expect(pages[0]).toContain('Schema version 2026-04-11');
    expect(text).not.toContain('Elsewhere Bank');
    // The sections, in order.
    const order = [
      '1. Trace volume by status',
      '2. Average confidence by status',
      '3. Policy coverage',
      '4. Review backlog',
      '5. Audit chain verification',
      '6. Incident clock',
      '7. Regulator mapping',
      '8. Fundamental-rights impact assessments by status',
    ].map((heading) => text.indexOf(heading));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    // Counts by status: six traces in the period (the one of 40 days ago is outside it).
    expect(text).toContain('6 traces in the period.');
    expect(text).toMatch(/approved 3 50\.0 %/);
    expect(text).toMatch(/flagged 2 33\.3 %/);
    expect(text).toMatch(/blocked 1 16\.7 %/);
    expect(text).toMatch(/success 0 0\.0 %/);
    // Average confidence by status.
    expect(text).toMatch(/approved 0\.900 3/);
    expect(text).toMatch(/flagged 0\.550 2/);
    expect(text).toMatch(/blocked 0\.800 1/);
    // The chart's legend and caption are text too.
    expect(text).toContain('Traces per day (UTC)');
    // Policy coverage.
    expect(text).toMatch(/No card numbers block 1 16\.7 %/);
    expect(text).toMatch(/Low confidence review flag 2 33\.3 %/);
    expect(text).toMatch(/Never matches flag 0 0\.0 %/);
    // Review backlog: the two flagged traces wait.
    expect(text).toContain('Pending 2');
    expect(text).toContain('Escalated 0');
  });

  it('reports the audit chain as the verification route does, with its head hash', async () => {
    const verify = await ctx.get('/api/v1/audit/verify', { token: owner.token });
    expect(verify.statusCode).toBe(200);
    const [head] = await ctx.db.db
      .select({ hash: auditEntries.hash })
      .from(auditEntries)
      .where(eq(auditEntries.organizationId, owner.organization.id))
      .orderBy(desc(auditEntries.sequence))
      .limit(1);
    const res = await ctx.get(REPORT, { token: owner.token });
    const { text } = await pdfText(res.rawPayload);
    expect(verify.json().data.valid).toBe(true);
    expect(text).toContain('Result Valid');
    expect(text).toContain(`Entries ${verify.json().data.totalEntries.toLocaleString('en-GB')}`);
    // The hash may wrap across lines; pdf.js then splits it with a space.
    expect(text.replace(/(?<=[0-9a-f]) (?=[0-9a-f])/g, '')).toContain(head!.hash);
    expect(text).toContain('First break none');
  });

  it('shows the incident clock: each open incident’s deadline and time left, or overdue', async () => {
    const res = await ctx.get(REPORT, { token: owner.token });
    const { text } = await pdfText(res.rawPayload);
    const now = generatedAt.getTime();
    const deathDeadline = new Date(now - 60_000 - DAY + 10 * DAY)
      .toISOString()
      .slice(0, 16)
      .replace('T', ' ');
    expect(text).toContain('2 open incidents, 1 overdue.');
    expect(text).toContain(`Wrongful loan refusal Death`);
    expect(text).toContain(`${deathDeadline} UTC 8 d 23 h left`);
    expect(text).toMatch(/Scoring outage Critical infrastructure .* OVERDUE/);
  });

  it('shows the status of every clause and each framework’s coverage, and the FRIAs by status', async () => {
    const res = await ctx.get(REPORT, { token: owner.token });
    const { text } = await pdfText(res.rawPayload);
    expect(text).toContain('ISO/IEC 42001: 5.6 % covered');
    expect(text).toContain('1 covered, 0 partial, 17 gaps, 0 not applicable, of 18 clauses.');
    expect(text).toContain('6.1.4 AI system impact assessment Covered');
    expect(text).toContain('4 Organizational context Gap');
    expect(text).toContain('EU AI Act: 0.0 % covered');
    expect(text).toContain('NIST AI RMF: 0.0 % covered');
    expect(text).toMatch(/draft 1 review 0 approved 0 archived 0/);
  });

  it('covers the period asked for', async () => {
    const query = { from: '2026-02-01T00:00:00Z', to: '2026-04-11T00:00:00Z' };
    const res = await ctx.get(REPORT, { token: owner.token, query });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toContain('compliance-report-2026-02-01-to-2026-04-11.pdf');
    const { text, pages } = await pdfText(res.rawPayload);
    // Whole days print as dates, the last one being the day before the exclusive end.
    expect(pages[0]).toContain('Period 2026-02-01 to 2026-04-10 (UTC)');
    expect(text).toContain('7 traces in the period.');
    expect(text).toMatch(/approved 4 57\.1 %/);
    expect(text).toContain('Traces per week');
  });

  it('refuses a bad period with 400, no credentials with 401 and an agent key with 403', async () => {
    const bad: Record<string, string>[] = [
      { from: '2026-04-02T00:00:00Z', to: '2026-04-01T00:00:00Z' },
      { from: '2024-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
      { from: 'yesterday' },
      { to: '2026-13-45' },
    ];
    for (const query of bad) {
      const res = await ctx.get(REPORT, { token: owner.token, query });
      expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    }
    expectErrorEnvelope(await ctx.get(REPORT), 401, 'UNAUTHORIZED');
    expectErrorEnvelope(await ctx.get(REPORT, { apiKey: agent.key }), 403, 'FORBIDDEN');
  });
});

describe('the compliance PDF limiter', () => {
  let ctx: TestContext;
  afterAll(async () => ctx?.close());

  it('answers the 11th request of the hour with 429, per user', async () => {
    ctx = await TestContext.create();
    const a = await ctx.register({ organizationName: 'Limited' });
    const b = await ctx.addMember(a.organization.id, 'member');
    const results = [];
    for (let i = 0; i < 10; i++) results.push(await ctx.get(REPORT, { token: a.token }));
    expect(results.map((r) => r.statusCode)).toEqual(Array(10).fill(200));
    expect(results[9]!.headers['ratelimit-remaining']).toBe('0');
    const eleventh = await ctx.get(REPORT, { token: a.token });
    expectErrorEnvelope(eleventh, 429, 'RATE_LIMITED');
    expect(Number(eleventh.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(eleventh.headers['retry-after'])).toBeLessThanOrEqual(3600);
    // Another user of the same organization has a window of their own.
    expect((await ctx.get(REPORT, { token: b.token })).statusCode).toBe(200);
    // The window ends after an hour.
    ctx.clock.advance(3600 * 1000 + 1);
    expect((await ctx.get(REPORT, { token: a.token })).statusCode).toBe(200);
  });
});

describe('the compliance PDF without a usable Chromium', () => {
  const cases: Array<[string, Partial<AppConfig>]> = [
    ['CHROMIUM_PATH points at nothing', { chromiumPath: '/nonexistent/chromium' }],
    [
      'no system Chromium is looked for and the bundled one is disabled',
      {
        chromiumPath: undefined,
        pdf: { chromiumSources: [], renderTimeoutMs: 60_000, maxConcurrentRenders: 2 },
      },
    ],
  ];
  it.each(cases)('answers 503 naming CHROMIUM_PATH when %s', async (_case, config) => {
    const ctx = await TestContext.create({ config });
    try {
      const owner = await ctx.register();
      const res = await ctx.get(REPORT, { token: owner.token });
      expect(expectErrorEnvelope(res, 503, 'SERVICE_UNAVAILABLE').error).toContain('CHROMIUM_PATH');
    } finally {
      await ctx.close();
    }
  });
});

describe('the audit chain in the compliance PDF', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ now: START });
  });
  afterAll(async () => ctx?.close());

  const chainSection = (text: string) =>
    text.slice(text.indexOf('5. Audit chain verification'), text.indexOf('6. Incident clock'));
  /** An organization with a few audit entries, and how to add one and render its report's chain section. */
  async function chained(name: string) {
    const org = await ctx.register({ organizationName: name });
    const self = {
      org,
      token: org.token,
      incident: async () => {
        const res = await ctx.post('/api/v1/incidents', {
          token: self.token,
          body: { title: 'Entry', category: 'other', awareAt: ctx.clock.now().toISOString() },
        });
        expect(res.statusCode).toBe(201);
      },
      render: async () => {
        const res = await ctx.get(REPORT, { token: self.token });
        expect(res.statusCode, res.body).toBe(200);
        return chainSection((await pdfText(res.rawPayload)).text);
      },
      tamper: (sequence: number) =>
        ctx.db.db.execute(
          sql`update audit_entries set metadata = '{"tampered":true}'
              where organization_id = ${org.organization.id} and sequence = ${sequence}`,
        ),
    };
    for (let i = 0; i < 3; i++) await self.incident();
    return self;
  }

  it('verifies in full first, then after the verified prefix, and finds an entry altered after it', async () => {
    const a = await chained('Checkpointed');
    expect(await a.render()).toContain('Verified every entry, from the first');
    ctx.clock.advance(60_000);
    await a.incident();
    const second = await a.render();
    expect(second).toContain('Result Valid');
    expect(second).toMatch(
      /Verified entries \d+ onwards at .* after the entries the last verification passed/,
    );

    ctx.clock.advance(60_000);
    await a.incident();
    const [{ head }] = (
      (await ctx.db.db.execute(
        sql`select max(sequence)::int as head from audit_entries where organization_id = ${a.org.organization.id}`,
      )) as unknown as { rows: { head: number }[] }
    ).rows as [{ head: number }];
    await a.tamper(head);
    const third = await a.render();
    expect(third).toContain('Result Broken');
    expect(third).toMatch(new RegExp(`First break entry ${head} \\(\\w+\\): hash mismatch`));
  });

  it('finds an entry altered before the checkpoint at the next full verification, a day later', async () => {
    const b = await chained('Old tamper');
    expect(await b.render()).toContain('Result Valid');
    await b.tamper(2);
    // Within AUDIT_FULL_VERIFY_MAX_AGE_MS the report reads after the verified prefix, and says so.
    const within = await b.render();
    expect(within).toContain('Result Valid');
    expect(within).toContain('after the entries the last verification passed');
    // GET /audit/verify?full=true reads every entry.
    const verify = await ctx.get('/api/v1/audit/verify?full=true', { token: b.token });
    expect(verify.json().data).toMatchObject({
      valid: false,
      brokenAt: { sequence: 2, reason: 'hash_mismatch' },
    });
    ctx.clock.advance(24 * 3600 * 1000 + 60_000);
    b.token = await ctx.login(b.org.user.email);
    const late = await b.render();
    expect(late).toContain('Result Broken');
    expect(late).toMatch(/First break entry 2 \(\w+\): hash mismatch/);
  });
});

describe('the PDF renderer', () => {
  let ctx: TestContext;
  let owner: Registered;
  beforeAll(async () => {
    ctx = await TestContext.create({
      config: {
        userRateLimits: { ...testConfig().userRateLimits, compliancePdf: { max: 100, windowMs: 3600_000 } },
      },
    });
    owner = await ctx.register({ organizationName: 'Renderer' });
  });
  afterAll(async () => ctx?.close());

  it('renders requests beyond the two at a time once a slot frees', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, () => ctx.get(REPORT, { token: owner.token })),
    );
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200]);
    for (const r of results) expect(r.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  it('starts Chromium again when it died', async () => {
    expect((await ctx.get(REPORT, { token: owner.token })).statusCode).toBe(200);
    const renderer = ctx.app.get(PdfRenderer) as unknown as { browser: Promise<Browser> | null };
    const browser = await renderer.browser!;
    const died = new Promise((resolve) => browser.once('disconnected', resolve));
    browser.process()!.kill('SIGKILL');
    await died;
    const res = await ctx.get(REPORT, { token: owner.token });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
    expect(await renderer.browser).not.toBe(browser);
  });

  it('answers 503 when a render does not finish in time', async () => {
    const slow = await TestContext.create({
      config: { pdf: { ...testConfig().pdf, renderTimeoutMs: 1 } },
    });
    try {
      const someone = await slow.register();
      const res = await slow.get(REPORT, { token: someone.token });
      expect(expectErrorEnvelope(res, 503, 'SERVICE_UNAVAILABLE').error).toContain('did not render in time');
    } finally {
      await slow.close();
    }
  });
});
