import { readFileSync } from 'node:fs';
import { and, eq, sql } from 'drizzle-orm';
import { expect } from 'vitest';
import { buildProgram } from '../../apps/cli/src/cli.js';
import { recordSpans, toOtlpJson } from '../../libs/governance/src/otel/otlp-payloads.fixture.js';
import { traces } from '../../libs/governance/src/traces/trace.schema.js';
import type { Registered, TestContext } from './app.js';
import type { TestAgent } from './builders.js';
import { INGEST as CPI_INGEST, workspaceKey } from './cpi-suite.js';
import { QUEUE } from './review-suite.js';
import { TRACES } from './traces-suite.js';

/*
 * The masking suite (test/pii-masking.e2e-spec.ts): personal data planted in traces: valid values (the example IBANs
 * of ISO 13616 pass mod-97), every form a masked value could survive in, and traces that carry them in every field
 * that holds content, through POST /traces and through OTLP.
 */

/** The German example IBAN of ISO 13616, planted spaced and compact; and an e-mail address planted beside it. */
export const PLANTED_IBAN = 'DE89 3704 0044 0532 0130 00';
export const PLANTED_IBAN_COMPACT = 'DE89370400440532013000';
export const PLANTED_EMAIL = 'iban-holder.7f3a@mailbox-planted.example';
/**
 * Every way the planted values could survive: the IBAN spaced and compact, its digits with and without the check
 * digits, runs of its groups; the e-mail address and its parts.
 */
export const PLANTED_FORMS = [
  PLANTED_IBAN,
  PLANTED_IBAN_COMPACT,
  '89370400440532013000',
  '370400440532013000',
  '3704 0044 0532',
  '0532 0130 00',
  '0440532013',
  PLANTED_EMAIL,
  'iban-holder.7f3a',
  'mailbox-planted',
];

/** Used where the content is stored in clear (masking off, or IBANs not masked): never the planted values. */
export const NL_IBAN = 'NL91 ABNA 0417 1643 00';
export const CLEAR_EMAIL = 'kept-in-clear@shop.example';
/** The UK example IBAN, spaced and compact, and the French example IBAN: for hash mode. */
export const GB_IBAN = 'GB82 WEST 1234 5698 7654 32';
export const GB_IBAN_COMPACT = 'GB82WEST12345698765432';
export const FR_IBAN = 'FR14 2004 1010 0505 0001 3M02 606';

/** Each value of `forms` found in `text`. */
export const formsIn = (text: string, forms: readonly string[] = PLANTED_FORMS) =>
  forms.filter((f) => text.includes(f));
/** How many times `token` occurs in `text`. */
export const occurrences = (text: string, token: string) => text.split(token).length - 1;

/**
 * A trace through POST /traces with the planted IBAN and e-mail in every field that holds content: the prompt and its
 * context, the output text, tool-call arguments (nested), metadata (nested, in an array too) and the rationale. The
 * IBAN is there 8 times, the e-mail 5 times.
 */
export function plantedBody(): Record<string, unknown> {
  return {
    inputContext: {
      prompt: `Please refund order 5521 to IBAN ${PLANTED_IBAN} and confirm to ${PLANTED_EMAIL}.`,
      context: { account: { iban: PLANTED_IBAN_COMPACT, holder: { contact: PLANTED_EMAIL } } },
    },
    outputDecision: {
      action: 'issue_refund',
      text: `Refund of order 5521 sent to ${PLANTED_IBAN_COMPACT}; the receipt goes to ${PLANTED_EMAIL}.`,
      toolCalls: [
        {
          name: 'bank_transfer',
          arguments: {
            iban: PLANTED_IBAN,
            notify: PLANTED_EMAIL,
            amount: 42.5,
            memo: { line: `IBAN ${PLANTED_IBAN_COMPACT}` },
          },
        },
      ],
    },
    metadata: {
      customer: { accounts: [PLANTED_IBAN], channel: 'chat' },
      note: `paid to ${PLANTED_IBAN_COMPACT}`,
    },
    rationale: `The IBAN ${PLANTED_IBAN} is the one on file for ${PLANTED_EMAIL}.`,
    confidence: 0.95,
  };
}

/**
 * An OTLP export of a chat span and the tool execution it led to, with the planted values in the system prompt, the
 * user's message, the conversation id, the agent's name, the span's name, the answer, the tool call's arguments and
 * its result.
 */
export function plantedOtlp(): Buffer {
  return toOtlpJson(
    recordSpans([
      {
        name: `chat ${PLANTED_IBAN_COMPACT}`,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.conversation.id': `conversation of ${PLANTED_EMAIL}`,
          'gen_ai.agent.name': `assistant of ${PLANTED_EMAIL}`,
          'gen_ai.input.messages': JSON.stringify([
            { role: 'system', parts: [{ type: 'text', content: `Never repeat ${PLANTED_IBAN}.` }] },
            {
              role: 'user',
              parts: [{ type: 'text', content: `Refund me to ${PLANTED_IBAN}, I am ${PLANTED_EMAIL}` }],
            },
          ]),
          'gen_ai.output.messages': JSON.stringify([
            {
              role: 'assistant',
              finish_reason: 'tool_call',
              parts: [
                { type: 'text', content: `Sending the refund to ${PLANTED_IBAN_COMPACT}.` },
                {
                  type: 'tool_call',
                  id: 'call_1',
                  name: 'bank_transfer',
                  arguments: { iban: PLANTED_IBAN, notify: PLANTED_EMAIL },
                },
              ],
            },
          ]),
        },
      },
      {
        name: 'execute_tool bank_transfer',
        parent: 0,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'bank_transfer',
          'gen_ai.tool.call.id': 'call_1',
          'gen_ai.tool.call.arguments': JSON.stringify({ iban: PLANTED_IBAN_COMPACT, notify: PLANTED_EMAIL }),
          'gen_ai.tool.call.result': JSON.stringify({ status: 'sent', to: PLANTED_IBAN }),
        },
      },
    ]),
  );
}

export const ORG = '/api/v1/organizations/current';

/** A trace as GET /traces/:id answers it: the fields the masking tests read. */
export type TraceView = Record<string, unknown> & {
  piiMasked: Record<string, number> | null;
  outputDecision: { text: string } & Record<string, unknown>;
};

/** The stored content of a trace, as one text. */
export const storedContent = (t: Record<string, unknown>) =>
  JSON.stringify([t.inputContext, t.outputDecision, t.metadata, t.rationale]);

/** The hashes of the `<LABEL:hash>` tokens of a text, in order. */
export const tokensIn = (text: string, label: string) =>
  [...text.matchAll(new RegExp(`<${label}:([^>]*)>`, 'g'))].map((m) => m[1]!);

/** The helpers of the masking suite, on the suite's context (made in beforeAll). */
export function maskingHelpers(context: () => TestContext) {
  const patchOrg = (token: string, body: unknown) => context().patch(ORG, { token, body });
  const currentMasking = async (token: string) => {
    const res = await context().get(ORG, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.piiMasking as unknown;
  };
  /** PATCHes the setting and checks the answer shows it. */
  const setMasking = async (token: string, piiMasking: unknown) => {
    const res = await patchOrg(token, { piiMasking });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.piiMasking).toEqual(piiMasking);
  };
  const traceOf = async (id: string, token: string) => {
    const res = await context().get(`${TRACES}/${id}`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as TraceView;
  };
  const ingest = async (agent: TestAgent, body: Record<string, unknown>, status = 201) => {
    const res = await context().post(TRACES, { apiKey: agent.key, body });
    expect(res.statusCode, res.body).toBe(status);
    return res.json().data as { id: string; reviewItemId?: string };
  };
  /** GET /traces/:id/verify's status. */
  const verifyOf = async (id: string, token: string) => {
    const res = await context().get(`${TRACES}/${id}/verify`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.status as string;
  };
  /** The id of the organization's one trace ingested over OTLP from a span of this operation. */
  const otlpTraceId = async (organizationId: string, operation: string) => {
    const rows = await context()
      .db.db.select({ id: traces.id })
      .from(traces)
      .where(
        and(
          eq(traces.organizationId, organizationId),
          sql`${traces.metadata}->>'source' = 'otlp'`,
          sql`${traces.metadata}->>'operation' = ${operation}`,
        ),
      );
    expect(rows, `the OTLP ${operation} trace`).toHaveLength(1);
    return rows[0]!.id;
  };
  /** The organization's export as the operator's CLI writes it (`org:export`), read back from `file`. */
  const exportOrganization = async (organizationId: string, file: string) => {
    const printed: unknown[] = [];
    await buildProgram(
      (fn) => fn(context().app),
      (value) => printed.push(value),
    ).parseAsync(['node', 'cli', 'org:export', organizationId, file]);
    expect(printed[0]).toMatchObject({ organizationId, file });
    return readFileSync(file, 'utf8');
  };
  /** The bodies of the routes that read a trace, each answered 200. */
  const readingAnswers = async (ids: readonly string[], token: string) => {
    const answers: string[] = [];
    const urls = ids.flatMap((id) =>
      ['', '/explanation', '/verify', '/similar'].map((tail) => `${TRACES}/${id}${tail}`),
    );
    for (const url of [...urls, `${TRACES}?limit=100`]) {
      const res = await context().get(url, { token });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      answers.push(res.body);
    }
    return answers;
  };
  return {
    patchOrg,
    currentMasking,
    setMasking,
    traceOf,
    ingest,
    verifyOf,
    otlpTraceId,
    exportOrganization,
    readingAnswers,
  };
}

/**
 * Bodies of `piiMasking` that PATCH /organizations/current refuses with 400 VALIDATION_ERROR: what is wrong, the
 * value, the detail's field and its message.
 */
export const REFUSED_SETTINGS: [string, unknown, string, RegExp][] = [
  ['an unknown entity', { entities: ['iban', 'passport'], mode: 'redact' }, 'piiMasking.entities', /one of/],
  ['no entity', { entities: [], mode: 'redact' }, 'piiMasking.entities', /at least one/],
  [
    'a repeated entity',
    { entities: ['iban', 'email', 'iban'], mode: 'hash' },
    'piiMasking.entities',
    /repeat/,
  ],
  ['entities not a list', { entities: 'iban', mode: 'redact' }, 'piiMasking.entities', /array/],
  ['a bad mode', { entities: ['iban'], mode: 'encrypt' }, 'piiMasking.mode', /redact, hash/],
  ['no mode', { entities: ['iban'] }, 'piiMasking.mode', /redact, hash/],
  [
    'an extra property',
    { entities: ['iban'], mode: 'redact', keepLast4: true },
    'piiMasking.keepLast4',
    /should not exist/,
  ],
  ['a string', 'iban', 'piiMasking', /object/],
  ['a list', [{ entities: ['iban'], mode: 'redact' }], 'piiMasking', /object/],
  ['a number', 1, 'piiMasking', /object/],
];

/** A CPI correction of the trace whose notes and corrected decision quote the planted values; its answer's body. */
export async function correctQuotingPlanted(
  ctx: TestContext,
  owner: Registered,
  traceId: string,
): Promise<string> {
  const key = await workspaceKey(ctx, owner);
  const corrected = await ctx.post(CPI_INGEST, {
    apiKey: key.key,
    body: {
      traceId,
      action: 'correct',
      correctedDecision: `refund to ${PLANTED_IBAN_COMPACT}`,
      feedbackNotes: `Customer ${PLANTED_EMAIL} sent ${PLANTED_IBAN}`,
    },
  });
  expect(corrected.statusCode, corrected.body).toBe(200);
  return corrected.body;
}

/** A review decision whose notes quote the planted IBAN (a reviewer quoting the account); its answer's body. */
export async function decideQuotingPlanted(
  ctx: TestContext,
  token: string,
  itemId: string,
  decision: 'approve' | 'reject',
  traceId: string,
): Promise<string> {
  const decided = await ctx.post(`${QUEUE}/${itemId}/decision`, {
    token,
    body: { decision, notes: `Checked the holder of ${PLANTED_IBAN} for ${traceId}; ${decision} confirmed.` },
  });
  expect(decided.statusCode, decided.body).toBe(200);
  return decided.body;
}
