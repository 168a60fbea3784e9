import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { TRACES, traceBody, traceFixture, traceHelpers } from './support/traces-suite.js';
import { type TestAgent } from './support/builders.js';

describe('traces', () => {
  let ctx: TestContext;
  let owner: Registered;
  let plain: TestAgent;

  beforeAll(async () => {
    ctx = await TestContext.create();
    ({ owner, plain } = await traceFixture(ctx));
  });
  afterAll(async () => ctx?.close());

  const { post, traceRow, traceCount } = traceHelpers(
    () => ctx,
    () => owner,
  );

  describe('POST /traces validation (schema 2026-04-11)', () => {
    const ctxObject = (bytes: number) => ({ d: 'x'.repeat(bytes - '{"d":""}'.length) });
    const cases: [string, (n: 'ok' | 'over') => Record<string, unknown>][] = [
      ['inputContext.prompt', (n) => traceBody({}, { prompt: 'p'.repeat(n === 'ok' ? 50_000 : 50_001) })],
      [
        'inputContext.systemPrompt',
        (n) => traceBody({}, { systemPrompt: 's'.repeat(n === 'ok' ? 50_000 : 50_001) }),
      ],
      ['inputContext.context', (n) => traceBody({}, { context: ctxObject(n === 'ok' ? 102_400 : 102_401) })],
      [
        'inputContext.conversationId',
        (n) => traceBody({}, { conversationId: 'c'.repeat(n === 'ok' ? 256 : 257) }),
      ],
      [
        'outputDecision.actionObject',
        (n) => traceBody({}, {}, { actionObject: ctxObject(n === 'ok' ? 10_240 : 10_241) }),
      ],
      [
        'outputDecision.rationale',
        (n) => traceBody({}, {}, { rationale: 'r'.repeat(n === 'ok' ? 50_000 : 50_001) }),
      ],
      [
        'outputDecision.alternatives',
        (n) =>
          traceBody(
            {},
            {},
            { alternatives: Array.from({ length: n === 'ok' ? 10 : 11 }, (_, i) => `alt ${i}`) },
          ),
      ],
      [
        'outputDecision.toolCalls',
        (n) =>
          traceBody(
            {},
            {},
            {
              toolCalls: Array.from({ length: n === 'ok' ? 50 : 51 }, (_, i) => ({
                name: `tool_${i}`,
                arguments: { i },
              })),
            },
          ),
      ],
    ];

    it.each(cases)(
      'accepts %s at its limit and refuses it one past with 400 naming the field',
      async (field, build) => {
        const ok = await post(plain.key, build('ok'));
        expect(ok.statusCode, ok.body.slice(0, 300)).toBe(201);
        const before = await traceCount();
        const over = expectErrorEnvelope(await post(plain.key, build('over')), 400, 'VALIDATION_ERROR');
        expect(over.details).toEqual([{ field, message: expect.any(String) }]);
        expect(await traceCount()).toBe(before);
      },
    );

    it('measures byte limits on the UTF-8 encoding (multi-byte characters count by bytes)', async () => {
      // "é" is 2 bytes: 5,117 of them plus the wrapper is 10,242 bytes, over 10 KiB though only 5,125 characters.
      const res = await post(plain.key, traceBody({}, {}, { actionObject: { d: 'é'.repeat(5117) } }));
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      expect(body.details).toEqual([{ field: 'outputDecision.actionObject', message: expect.any(String) }]);
    });

    it('refuses text PostgreSQL cannot store (NUL, unpaired surrogates) with 400, alone or among concurrent traces', async () => {
      const before = await traceCount();
      const poisoned = [
        JSON.stringify(traceBody({ metadata: { k: 'a\ud800b' } })),
        JSON.stringify(traceBody({ metadata: { ['\udfff']: 1 } })),
        JSON.stringify(traceBody({}, { prompt: 'nul \u0000 inside' })),
      ];
      const responses = await Promise.all([
        ...poisoned.map((payload) =>
          ctx.post(TRACES, { apiKey: plain.key, payload, headers: { 'content-type': 'application/json' } }),
        ),
        ...Array.from({ length: 6 }, () => post(plain.key, traceBody())),
      ]);
      const fields = responses
        .slice(0, 3)
        .map(
          (res) =>
            (expectErrorEnvelope(res, 400, 'VALIDATION_ERROR').details as { field: string }[])[0]?.field,
        );
      expect(fields).toEqual(['metadata.k', 'metadata', 'inputContext.prompt']);
      responses.slice(3).forEach((res) => expect(res.statusCode, res.body).toBe(201));
      expect(await traceCount()).toBe(before + 6);
    });

    it('names every missing or mistyped field', async () => {
      const res = await post(plain.key, {
        inputContext: { systemPrompt: 3 },
        outputDecision: { text: 'x' },
        confidence: 1.5,
        extra: true,
      });
      const body = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
      const fields = (body.details as { field: string }[]).map((d) => d.field).sort();
      expect(fields).toEqual(
        [
          'confidence',
          'extra',
          'inputContext.prompt',
          'inputContext.systemPrompt',
          'outputDecision.action',
        ].sort(),
      );
    });

    it('refuses an exactly requested unknown schema version with 400 VERSION_UNSUPPORTED and stores nothing', async () => {
      const before = await traceCount();
      const res = await post(plain.key, traceBody(), { 'x-svc-version': '2025-01-01' });
      expectErrorEnvelope(res, 400, 'VERSION_UNSUPPORTED');
      expect(await traceCount()).toBe(before);
      const pinned = await post(plain.key, traceBody(), { 'x-svc-version': '2026-04-11' });
      expect(pinned.statusCode).toBe(201);
      expect((await traceRow(pinned.json().data.id))!.schemaVersion).toBe('2026-04-11');
    });
  });
});
