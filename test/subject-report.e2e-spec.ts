import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppLogger, Outbox } from '#platform';
import { recordSpans } from '../libs/governance/src/otel/otlp-payloads.fixture.js';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { auditEntriesOf } from './support/audit-entries.js';
import type { TestAgent } from './support/builders.js';
import { INGEST as CPI_INGEST, workspaceKey } from './support/cpi-suite.js';
import { pdfText } from './support/pdf.js';
import { QUEUE, refundFlagPolicy } from './support/review-suite.js';
import { TRACES, traceBody } from './support/traces-suite.js';

const SUBJECTS = '/api/v1/subjects';
const OTLP = '/api/v1/otel/v1/traces';
const REF = 'customer/4711 ß';
const CONTACT = 'Appeals team, Acme Lending, 1 Harbour Street, Dublin';
const at = (ref: string, rest: string) => `${SUBJECTS}/${encodeURIComponent(ref)}/${rest}`;
/** As the PDF writes a time. */
const utc = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];
const exportWith = (exporter: SpanExporter, spans: ReadableSpan[]) =>
  new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));

/**
 * GET /subjects/:ref/report (GDPR art. 15): the PDF for the person, across agents and sources, each decision as its
 * explanation states it. docs/data-protection.md, "The person's report (article 15)".
 */
describe('the person’s report', () => {
  let ctx: TestContext;
  let owner: Registered;
  let other: Registered;
  let nobody: Registered;
  let admin: { token: string };
  let member: { token: string; email: string };
  let viewer: { token: string };
  let loans: TestAgent;
  let fraud: TestAgent;
  let base: string;
  /** The subject's decisions, oldest first. */
  const ids = { erased: '', reviewed: '', otlp: '', blocked: '' };
  /** When the reviewer decided, and when the oldest decision was erased. */
  const times = { reviewed: '', erased: '' };
  let bystander: string;
  let otherOrganization: string;

  const report = (ref: string, token?: string) => ctx.get(at(ref, 'report'), token ? { token } : {});
  async function reportText(ref: string, token: string) {
    const res = await report(ref, token);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    return pdfText(res.rawPayload);
  }
  const newAgent = async (name: string, description: string): Promise<TestAgent> => {
    const res = await ctx.post('/api/v1/agents', { token: owner.token, body: { name, description } });
    expect(res.statusCode, res.body).toBe(201);
    return { id: res.json().data.id, key: res.json().data.apiKey };
  };
  const ingest = async (agent: TestAgent, body: Record<string, unknown>, status: number) => {
    ctx.clock.advance(60_000);
    const res = await ctx.post(TRACES, { apiKey: agent.key, body });
    expect(res.statusCode, res.body).toBe(status);
    return res.json().data as { id: string; reviewItemId?: string };
  };
  const createdAt = async (id: string) =>
    (await ctx.get(`${TRACES}/${id}`, { token: owner.token })).json().data.createdAt as string;
  async function eraseAndWait(ref: string): Promise<void> {
    const res = await ctx.post(at(ref, 'erasure'), { token: owner.token });
    expect(res.statusCode, res.body).toBe(202);
    for (let i = 0; i < 100; i++) {
      if ((await ctx.get(at(ref, 'erasure'), { token: owner.token })).json().data.status === 'done') return;
      await new Promise((r) => setTimeout(r, 50));
      // The erasure runs after its request commits; the retry pass picks it up if that attempt failed.
      if (i % 20 === 19) await ctx.service(Outbox).runDue('subject.erase');
    }
    throw new Error('the erasure did not finish');
  }

  beforeAll(async () => {
    ctx = await TestContext.create();
    ctx.clock.set(new Date());
    owner = await ctx.register({ organizationName: 'Acme Lending' });
    other = await ctx.register({ organizationName: 'Elsewhere Bank' });
    nobody = await ctx.register({ organizationName: 'Nobody Ltd' });
    // Feedback (POST /cpi/ingest) needs the enterprise plan.
    await ctx.setPlan(owner.organization.id, 'enterprise');
    admin = await ctx.addMember(owner.organization.id, 'admin');
    member = await ctx.addMember(owner.organization.id, 'member');
    viewer = await ctx.addMember(owner.organization.id, 'viewer');
    loans = await newAgent('Loan assistant', 'Pre-screens consumer loan applications');
    fraud = await newAgent('Fraud screen', 'Checks card payments for signs of fraud');
    await refundFlagPolicy(ctx, owner.organization.id, []);
    const card = await ctx.post('/api/v1/policies', {
      token: owner.token,
      body: { templateId: 'payment-card-in-output' },
    });
    expect(card.statusCode, card.body).toBe(201);
    const contact = await ctx.patch('/api/v1/organizations/current', {
      token: owner.token,
      body: { contestContact: CONTACT },
    });
    expect(contact.statusCode, contact.body).toBe(200);
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;

    // The oldest decision, erased at the person's request before the others were made.
    ids.erased = (
      await ingest(fraud, traceBody({ subjectRef: REF }, { prompt: 'Is payment 77 genuine?' }), 201)
    ).id;
    await eraseAndWait(REF);
    times.erased = ctx.clock.now().toISOString();
    // Flagged by the refund rule, then approved by a member in the review queue.
    const flagged = await ingest(
      loans,
      traceBody({ subjectRef: REF }, { prompt: 'Please refund order 42' }),
      202,
    );
    ids.reviewed = flagged.id;
    ctx.clock.advance(90_000);
    times.reviewed = ctx.clock.now().toISOString();
    const decided = await ctx.post(`${QUEUE}/${flagged.reviewItemId}/decision`, {
      token: member.token,
      body: { decision: 'approve' },
    });
    expect(decided.statusCode, decided.body).toBe(200);
    // Over OTLP with the real SDK's exporter, then corrected by human feedback.
    ctx.clock.advance(60_000);
    const exporter = new OTLPTraceExporter({ url: base + OTLP, headers: { 'X-API-Key': fraud.key } });
    const span = {
      name: 'chat gpt-4o',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: 'Check payment 78' }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', finish_reason: 'stop', parts: [{ type: 'text', content: 'Looks genuine.' }] },
        ]),
        'governance.subject.ref': REF,
      },
    };
    const exported = await exportWith(exporter, recordSpans([span]));
    await exporter.shutdown();
    expect(exported.code, String(exported.error)).toBe(0);
    const listed = await ctx.get(at(REF, 'decisions'), { token: owner.token });
    ids.otlp = listed
      .json()
      .data.find(
        (t: { agentId: string; erasedAt: string | null }) => t.agentId === fraud.id && !t.erasedAt,
      ).id;
    ctx.clock.advance(3_600_000);
    const feedback = await ctx.post(CPI_INGEST, {
      apiKey: (await workspaceKey(ctx, owner)).key,
      body: {
        traceId: ids.otlp,
        action: 'correct',
        correctedDecision: { decision: 'decline', confidence: 0.7 },
      },
    });
    expect(feedback.statusCode, feedback.body).toBe(200);
    // Refused by the payment-card rule.
    ids.blocked = (
      await ingest(
        loans,
        traceBody(
          { subjectRef: REF, confidence: 0.85 },
          { prompt: 'May I borrow 5,000 EUR?' },
          { text: 'Card 4111 1111 1111 1111 is on file.' },
        ),
        403,
      )
    ).id;
    // Another person, and another organization's decision under the same reference.
    bystander = (
      await ingest(loans, traceBody({ subjectRef: 'someone else' }, { prompt: 'May I borrow 900 EUR?' }), 201)
    ).id;
    const theirAgent = await ctx.newAgent(other.organization.id, 'Elsewhere scorer');
    otherOrganization = (await ingest(theirAgent, traceBody({ subjectRef: REF }), 201)).id;
  });
  afterAll(async () => ctx?.close());

  it('lists every decision about the reference, newest first, in plain words for the person', async () => {
    const logger = ctx.service(AppLogger).pino;
    logger.level = 'info';
    const lines: unknown[] = [];
    const spies = (['info', 'warn', 'error'] as const).map((level) =>
      vi.spyOn(logger, level).mockImplementation((...args: unknown[]) => void lines.push(args)),
    );
    const res = await report(REF, owner.token);
    spies.forEach((spy) => spy.mockRestore());
    logger.level = 'silent';
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['content-disposition']).toMatch(
      /^attachment; filename="decisions-about-you-\d{4}-\d\d-\d\d\.pdf"$/,
    );
    expect(res.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    // The reference is in the PDF, which the person asked for; never in the logs.
    expect(JSON.stringify(lines)).toContain('/subjects/[Redacted]/report');
    expect(JSON.stringify(lines)).not.toContain('4711');
    if (process.env.SUBJECT_REPORT_PDF) writeFileSync(process.env.SUBJECT_REPORT_PDF, res.rawPayload);

    const pdf = await pdfText(res.rawPayload);
    const { text } = pdf;
    expect(pdf.title).toBe('Decisions about you: Acme Lending');
    expect(pdf.language).toBe('en');
    expect(text).toContain(`Your reference at Acme Lending: ${REF}`);
    expect(text).toContain('Acme Lending holds 4 decisions about you. All of them are in this report.');
    // Newest first: the blocked one, the corrected OTLP one, the reviewed one, the erased one.
    const order = [ids.blocked, ids.otlp, ids.reviewed, ids.erased];
    const positions = order.map((id) => text.indexOf(`Reference of the decision: ${id}`));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    for (const [n, id] of order.entries())
      expect(text).toContain(`Decision ${n + 1}: ${utc(await createdAt(id))}`);

    const [blocked, corrected, reviewed, erased] = positions.map((end, n) =>
      text.slice(positions[n - 1] ?? 0, end),
    );
    expect(blocked).toContain(
      'AI system “Loan assistant”. What it is for: “Pre-screens consumer loan applications”.',
    );
    expect(blocked).toContain('Outcome Refused (blocked). The system’s confidence: 85%.');
    expect(blocked).toContain(
      'The rule “Payment-card number in output”: The output contained a payment-card number. Under this rule ' +
        'such a decision is refused.',
    );
    expect(blocked).toContain('No person reviewed this decision before it took effect.');
    expect(blocked).not.toContain('Refunds need a human');

    expect(corrected).toContain('“Fraud screen”. What it is for: “Checks card payments for signs of fraud”.');
    expect(corrected).toContain('Corrected by a person after the decision');
    expect(corrected).toContain('None of the organization’s rules applied.');
    expect(corrected).toContain('a person corrected the decision.');
    expect(corrected).toContain('it is now “decline”.');

    expect(reviewed).toContain('“Loan assistant”');
    expect(reviewed).toContain('Outcome Approved.');
    expect(reviewed).toContain(
      'The rule “Refunds need a human”: The request contained “refund”. Under this rule such a decision is held ' +
        'for a person to review.',
    );
    expect(reviewed).toContain(
      `A person with the role “member” in the organization reviewed it on ${utc(times.reviewed)} and approved the ` +
        'decision.',
    );

    expect(erased).toContain('“Fraud screen”');
    expect(erased).toContain('Outcome Approved.');
    expect(erased).toContain(
      `The details of this decision (what was asked and the system’s answer) were erased on ${utc(times.erased)} ` +
        'at your request.',
    );
    expect(text).toContain('Approved (details erased)');

    expect(text).toContain(`How to contest a decision If you disagree with a decision, you can contest it`);
    expect(text).toContain(CONTACT);
    // Nobody's e-mail, no content, and nothing of another person or another organization.
    for (const absent of [
      member.email,
      owner.user.email,
      '4111',
      'Please refund',
      'Check payment',
      bystander,
      otherOrganization,
      'Elsewhere',
    ]) {
      expect(text).not.toContain(absent);
    }
  });

  it('is audited as subject.accessed, the subject named by its hash', async () => {
    const entries = (await auditEntriesOf(ctx, owner.organization.id, 'subject.accessed')).filter(
      (e) => (e.metadata as { what: string }).what === 'report',
    );
    expect(entries.length).toBeGreaterThanOrEqual(1);
    expect(entries[0]).toMatchObject({ targetType: 'subject', userId: owner.user.id });
    expect(entries[0]!.targetId).toMatch(/^[0-9a-f]{64}$/);
    expect(entries[0]!.metadata).toEqual({ what: 'report', decisions: 4 });
    expect(JSON.stringify(entries)).not.toContain('4711');
  });

  it('is for owners and admins; another organization sees only its own decisions', async () => {
    const before = (await auditEntriesOf(ctx, owner.organization.id, 'subject.accessed')).length;
    expect((await reportText(REF, admin.token)).text).toContain('holds 4 decisions about you');
    expect(await auditEntriesOf(ctx, owner.organization.id, 'subject.accessed')).toHaveLength(before + 1);
    expectErrorEnvelope(await report(REF, member.token), 403, 'FORBIDDEN');
    expectErrorEnvelope(await report(REF, viewer.token), 403, 'FORBIDDEN');
    expectErrorEnvelope(await ctx.get(at(REF, 'report'), { apiKey: loans.key }), 403, 'FORBIDDEN');
    expectErrorEnvelope(await report(REF), 401, 'UNAUTHORIZED');
    // Refused before anything is read or audited.
    expect(await auditEntriesOf(ctx, owner.organization.id, 'subject.accessed')).toHaveLength(before + 1);

    const none = (await reportText(REF, nobody.token)).text;
    expect(none).toContain('Nobody Ltd’s records hold no decision about you under this reference.');
    expect(none).not.toContain('Reference of the decision');
    expect(none).toContain('Nobody Ltd has not named a contact for contesting decisions.');
    expect(none).not.toContain(CONTACT);
    const [entry] = await auditEntriesOf(ctx, nobody.organization.id, 'subject.accessed');
    expect(entry!.metadata).toEqual({ what: 'report', decisions: 0 });

    const theirs = (await reportText(REF, other.token)).text;
    expect(theirs).toContain('Elsewhere Bank holds 1 decision about you.');
    expect(theirs).toContain(`Reference of the decision: ${otherOrganization}`);
    for (const id of Object.values(ids)) expect(theirs).not.toContain(id);
    expect(theirs).not.toContain('Loan assistant');
  });

  it('gives a PDF saying so for a reference without decisions, and 400 for a reference over 200 characters', async () => {
    const text = (await reportText('x'.repeat(200), owner.token)).text;
    expect(text).toContain('Acme Lending’s records hold no decision about you under this reference.');
    expect(text).toContain(CONTACT);
    expectErrorEnvelope(await report('z'.repeat(201), owner.token), 400, 'VALIDATION_ERROR');
  });
});
