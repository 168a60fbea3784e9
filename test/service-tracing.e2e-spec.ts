import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decodeOtlpTraces } from '../libs/governance/src/otel/otlp-decode.js';
import { buildService, callService, type StartedService, startService } from './support/built-service.js';
import { OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

/** OTLP span kinds and status codes. */
const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;
const onPostgres = inject('databaseMode') === 'postgres';

/**
 * OpenTelemetry tracing of the service itself (docs/operators.md, "Tracing the service"): the built service is started
 * as a process, as the image starts it, with the OTEL_* variables an operator sets, and exports to a receiver here.
 */
let build: ReturnType<typeof buildService>;
beforeAll(() => {
  build = buildService();
});
afterAll(() => build?.remove());

type Log = Record<string, unknown>;

async function waitForLog(service: StartedService, find: (line: Log) => boolean): Promise<Log> {
  for (const deadline = Date.now() + 10_000; ;) {
    const line = service.logs.find(find);
    if (line) return line;
    if (Date.now() > deadline) throw new Error('no such log line within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The completion line of the request sent with this X-Request-Id. */
const completion = (service: StartedService, requestId: string) =>
  waitForLog(service, (line) => line.reqId === requestId && line.msg === 'request completed');

/** An organization with an agent, and a webhook on approved traces when given its URL, made through the API. */
async function newOrganization(service: StartedService, webhookUrl?: string) {
  const owner = await callService(service.base, 'POST', '/auth/register', {
    body: {
      name: 'Tracing Owner',
      email: `owner-${randomUUID()}@example.com`,
      password: 'Tracing-pass-123',
      organizationName: `Tracing ${randomUUID()}`,
    },
  });
  expect(owner.status).toBe(201);
  const token = owner.json!.data!.token as string;
  const agent = await callService(service.base, 'POST', '/agents', { token, body: { name: 'traced-agent' } });
  expect(agent.status).toBe(201);
  const key = agent.json!.data!.apiKey as string;
  if (webhookUrl === undefined) return { token, key, webhookId: '' };
  const webhook = await callService(service.base, 'POST', '/webhooks', {
    token,
    body: { url: webhookUrl, events: ['trace.approved'] },
  });
  expect(webhook.status).toBe(201);
  return { token, key, webhookId: webhook.json!.data!.id as string };
}

const ingest = (service: StartedService, key: string, prompt: string, requestId: string) =>
  callService(service.base, 'POST', '/traces', {
    key,
    requestId,
    body: { inputContext: { prompt }, outputDecision: { action: 'answer', text: 'Yes.' } },
  });

/** A request with headers of the test's choosing (a client's `traceparent`, forwarding headers, a user agent). */
const send = (
  service: StartedService,
  path: string,
  headers: Record<string, string>,
  options: { method?: string; body?: unknown } = {},
) =>
  fetch(`${service.base}/api/v1${path}`, {
    method: options.method ?? 'GET',
    headers: { ...(options.body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: options.body ? JSON.stringify(options.body) : undefined,
  }).then(async (res) => {
    // An event stream would not end: its answer is not read.
    await res.body?.cancel();
    return res.status;
  });

/** A span's parent, its parent's parent, and so on, among the spans received. */
function ancestors(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const chain: ReceivedSpan[] = [];
  for (let parent = span.parentSpanId; parent !== undefined;) {
    const found = spans.find((s) => s.traceId === span.traceId && s.spanId === parent);
    if (!found) break;
    chain.push(found);
    parent = found.parentSpanId;
  }
  return chain;
}

const isServerSpanOf = (route: string) => (span: ReceivedSpan) =>
  span.kind === SERVER && span.attributes['http.route'] === route;

/**
 * Ingests a trace under a client's `traceparent` with the given flags (`01` sampled, `00` not), and checks that the
 * request was traced whole in the client's trace: its log line, its server span under the client's, and the batch
 * span under that. Returns the trace's id.
 */
async function expectTracedUnder(service: StartedService, otlp: OtlpReceiver, key: string, flags: '00' | '01') {
  const [traceId, parentId, requestId] = [randomBytes(16).toString('hex'), randomBytes(8).toString('hex'), randomUUID()];
  const status = await send(
    service,
    '/traces',
    { 'x-api-key': key, 'x-request-id': requestId, traceparent: `00-${traceId}-${parentId}-${flags}` },
    { method: 'POST', body: { inputContext: { prompt: 'parent?' }, outputDecision: { action: 'answer', text: 'Yes.' } } },
  );
  expect(status).toBe(201);
  // The client's trace is continued (W3C propagation), and sampled.
  expect(await completion(service, requestId)).toMatchObject({ trace_id: traceId, trace_flags: '01' });
  const http = await otlp.waitFor((spans) => spans.find((s) => s.traceId === traceId && s.kind === SERVER));
  expect(http).toMatchObject({ name: 'POST /api/v1/traces', parentSpanId: parentId });
  const batch = await otlp.waitFor((spans) =>
    spans.find((s) => s.name === 'trace-writer.batch' && s.traceId === traceId),
  );
  expect(ancestors(otlp.spans, batch).map((s) => s.spanId)).toContain(http.spanId);
  return traceId;
}

describe('tracing on: OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let otlp: OtlpReceiver;
  let hooks: WebhookReceiver;
  let service: StartedService;
  let org: Awaited<ReturnType<typeof newOrganization>>;

  beforeAll(async () => {
    otlp = await OtlpReceiver.start();
    hooks = await WebhookReceiver.start();
    service = await startService(build.entry, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    org = await newOrganization(service, hooks.url);
  });
  afterAll(async () => {
    await service?.stop();
    await otlp?.close();
    await hooks?.close();
  });

  it('exports the HTTP span of an ingest request, the batch span under it, its queries and the first webhook attempt under the batch', async () => {
    const prompt = `Refund order ${randomUUID()}?`;
    const requestId = randomUUID();
    expect((await ingest(service, org.key, prompt, requestId)).status).toBe(201);

    // The request's log lines carry its trace, and the completion line the HTTP span itself.
    const line = await completion(service, requestId);
    const http = await otlp.waitFor((spans) =>
      spans.find((s) => s.traceId === line.trace_id && s.kind === SERVER),
    );
    expect(http).toMatchObject({
      name: 'POST /api/v1/traces',
      service: 'governance-service',
      attributes: { 'http.route': '/api/v1/traces', 'http.response.status_code': 201 },
    });
    expect(line).toMatchObject({ span_id: http.spanId, trace_flags: '01' });
    const lines = service.logs.filter((l) => l.reqId === requestId);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.trace_id !== http.traceId)).toEqual([]);

    const batch = await otlp.waitFor((spans) =>
      spans.find((s) => s.name === 'trace-writer.batch' && s.traceId === http.traceId),
    );
    expect(ancestors(otlp.spans, batch).map((s) => s.spanId)).toContain(http.spanId);
    expect(batch.attributes).toMatchObject({
      'governance.batch.traces': 1,
      'governance.batch.organizations': 1,
    });
    expect(batch.links).toEqual([]);

    // The event's first webhook attempt, run from memory after the commit, is traced under the batch.
    await hooks.waitFor(1);
    const send = await otlp.waitFor((spans) =>
      spans.find((s) => s.name === 'webhook.send' && s.parentSpanId === batch.spanId),
    );
    expect(send).toMatchObject({
      kind: CLIENT,
      attributes: { 'server.address': '127.0.0.1', 'http.response.status_code': 200 },
    });
    // The receiver is told nothing of the service's traces.
    expect(hooks.received[0]!.headers.traceparent).toBeUndefined();

    if (onPostgres) {
      const queries = otlp.spans.filter(
        (s) => s.parentSpanId === batch.spanId && s.scope === '@opentelemetry/instrumentation-pg',
      );
      expect(queries.map((s) => s.attributes['db.query.text']).join('\n')).toContain('insert into "traces"');
    }
    // The batch's statements inline the trace: what a span shows of them has no value in it.
    expect(JSON.stringify(otlp.spans)).not.toContain(prompt);
    // Health checks are not traced.
    expect(otlp.spans.filter((s) => s.attributes['url.path'] === '/health')).toEqual([]);
  });

  // On PGlite the one connection serializes each request's reads behind the batch being written, so that requests
  // seldom share a batch; on PostgreSQL they read while it commits, and queue.
  it.runIf(onPostgres)(
    'makes a batch of several requests a child of the first one’s span, linked to the others',
    async () => {
      let batch: ReceivedSpan | null = null;
      // Requests sent at once queue while the batch before them commits; a few rounds make a batch of several certain.
      for (let round = 0; round < 10 && !batch; round++) {
        const ids = Array.from({ length: 8 }, () => randomUUID());
        const answers = await Promise.all(ids.map((id) => ingest(service, org.key, 'concurrent', id)));
        expect(answers.map((a) => a.status)).toEqual(ids.map(() => 201));
        const traces = new Set(
          await Promise.all(ids.map(async (id) => (await completion(service, id)).trace_id)),
        );
        batch = await otlp.waitFor((spans) => {
          const batches = spans.filter(
            (s) =>
              s.name === 'trace-writer.batch' &&
              (traces.has(s.traceId) || s.links.some((link) => traces.has(link.traceId))),
          );
          const committed = batches.reduce(
            (n, s) => n + (s.attributes['governance.batch.traces'] as number),
            0,
          );
          if (committed < ids.length) return undefined;
          return batches.find((s) => (s.attributes['governance.batch.traces'] as number) > 1) ?? null;
        });
      }
      expect(batch).not.toBeNull();
      const { traceId, links, attributes } = batch!;
      // One parent, a link to each other request (each request sent one trace).
      expect(links).toHaveLength((attributes['governance.batch.traces'] as number) - 1);
      const requestTraces = [traceId, ...links.map((link) => link.traceId)];
      expect(new Set(requestTraces).size).toBe(requestTraces.length);
      const server = (span: ReceivedSpan) =>
        [span, ...ancestors(otlp.spans, span)].find(isServerSpanOf('/api/v1/traces'));
      expect(server(batch!)).toBeDefined();
      for (const link of links) {
        const linked = otlp.spans.find((s) => s.traceId === link.traceId && s.spanId === link.spanId);
        expect(linked && server(linked)).toBeDefined();
      }
    },
  );

  it('traces a webhook test send: the outbox dispatch under the request, the failed send under the dispatch', async () => {
    hooks.answer({ status: 503 });
    const requestId = randomUUID();
    const sent = await callService(service.base, 'POST', `/webhooks/${org.webhookId}/test`, {
      token: org.token,
      requestId,
    });
    expect(sent.status).toBe(200);
    const line = await completion(service, requestId);
    const dispatch = await otlp.waitFor((spans) =>
      spans.find((s) => s.name === 'outbox.dispatch' && s.traceId === line.trace_id),
    );
    expect(ancestors(otlp.spans, dispatch).some(isServerSpanOf('/api/v1/webhooks/:id/test'))).toBe(true);
    expect(dispatch.attributes['governance.outbox.topic']).toBe('webhook.deliver');
    expect(dispatch.status.code).toBe(ERROR);
    const send = await otlp.waitFor((spans) =>
      spans.find((s) => s.name === 'webhook.send' && s.parentSpanId === dispatch.spanId),
    );
    expect(send.attributes['http.response.status_code']).toBe(503);
    expect(send.status).toEqual({ code: ERROR, message: 'The receiver answered 503' });
  });
});

describe('tracing on: what spans never carry, and a client that asks for no trace', () => {
  let otlp: OtlpReceiver;
  let service: StartedService;

  beforeAll(async () => {
    otlp = await OtlpReceiver.start();
    // TRUST_PROXY unset: the service takes the client to be the connection's peer.
    service = await startService(build.entry, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
  });
  afterAll(async () => {
    await service?.stop();
    await otlp?.close();
  });

  it('records no secret of a URL on any span: stream tokens, invitation tokens, sign-in codes and states', async () => {
    const secret = () => randomBytes(24).toString('base64url');
    const [stream, invitation, code, state, saml] = [secret(), secret(), secret(), secret(), secret()];
    const requests: [route: string, path: string, urlPath: string, urlQuery: string | undefined][] = [
      [
        '/api/v1/events/stream',
        `/events/stream?token=${stream}`,
        '/api/v1/events/stream',
        'token=[Redacted]',
      ],
      [
        '/api/v1/team/invites/validate/:token',
        `/team/invites/validate/${invitation}`,
        '/api/v1/team/invites/validate/[Redacted]',
        undefined,
      ],
      [
        '/api/v1/auth/google/callback',
        `/auth/google/callback?code=${code}&state=${state}`,
        '/api/v1/auth/google/callback',
        'code=[Redacted]&state=[Redacted]',
      ],
      [
        '/api/v1/auth/saml/logout/callback',
        `/auth/saml/logout/callback?SAMLResponse=${saml}`,
        '/api/v1/auth/saml/logout/callback',
        'SAMLResponse=[Redacted]',
      ],
    ];
    for (const [, path] of requests) await send(service, path, {});

    // Each request's HTTP server span, and the request span @fastify/otel makes under it.
    for (const [route, , urlPath, urlQuery] of requests) {
      const [server, request] = await otlp.waitFor((spans) => {
        const server = spans.find(isServerSpanOf(route));
        const request =
          server && spans.find((s) => s.parentSpanId === server.spanId && s.scope === '@fastify/otel');
        return request && [server, request];
      });
      for (const span of [server, request]) {
        expect(span.attributes['url.path']).toBe(urlPath);
        expect(span.attributes['url.query']).toBe(urlQuery);
      }
    }
    const exported = JSON.stringify(otlp.spans);
    for (const value of [stream, invitation, code, state, saml]) expect(exported).not.toContain(value);
  });

  it('records the client address the service uses, never one a client claims, and no user agent or peer', async () => {
    const requestId = randomUUID();
    await send(service, '/agents', {
      'x-request-id': requestId,
      'x-forwarded-for': '203.0.113.77',
      forwarded: 'for=198.51.100.9',
      'user-agent': 'claiming-agent/1.0',
    });
    const line = await completion(service, requestId);
    const server = await otlp.waitFor((spans) =>
      spans.find((s) => s.traceId === line.trace_id && s.kind === SERVER),
    );
    expect(server.attributes['client.address']).toBe('127.0.0.1');
    expect(Object.keys(server.attributes).filter((key) => /^(user_agent|network\.peer)\./.test(key))).toEqual(
      [],
    );
    const exported = JSON.stringify(otlp.spans.filter((s) => s.traceId === line.trace_id));
    for (const claimed of ['203.0.113.77', '198.51.100.9', 'claiming-agent'])
      expect(exported).not.toContain(claimed);
  });

  it('traces a request whose traceparent says not sampled, and the batch its trace joins', async () => {
    const org = await newOrganization(service);
    await expectTracedUnder(service, otlp, org.key, '00');
  });
});

describe('tracing on, sampling decided as a request arrives (parentbased_traceidratio at 0)', () => {
  it('traces nothing of a request the sampler leaves out, and the whole of one whose traceparent is sampled', async () => {
    const otlp = await OtlpReceiver.start();
    const service = await startService(build.entry, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    try {
      const org = await newOrganization(service);
      const body = { inputContext: { prompt: 'sampled?' }, outputDecision: { action: 'answer', text: 'Yes.' } };
      // Left out: no traceparent, and one that says not sampled (sampled as a root, at 0).
      const [plain, notSampled] = [randomUUID(), randomUUID()];
      expect((await ingest(service, org.key, 'left out', plain)).status).toBe(201);
      const unsampledParent = `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`;
      expect(
        await send(
          service,
          '/traces',
          { 'x-api-key': org.key, 'x-request-id': notSampled, traceparent: unsampledParent },
          { method: 'POST', body },
        ),
      ).toBe(201);
      for (const requestId of [plain, notSampled]) {
        expect(await completion(service, requestId)).not.toHaveProperty('trace_id');
      }
      // Several export intervals: no span at all, of the requests, their batches or their queries.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(otlp.spans.map((span) => span.name)).toEqual([]);

      // A sampled traceparent is followed: the request is traced whole, its batch under it.
      const traceId = await expectTracedUnder(service, otlp, org.key, '01');
      expect(otlp.spans.every((span) => span.traceId === traceId)).toBe(true);
    } finally {
      await service.stop();
      await otlp.close();
    }
  });
});

describe('tracing on, the spans still buffered when the service stops', () => {
  it('exports them (OTLP/protobuf, the default protocol) before the process ends on SIGTERM', async () => {
    const otlp = await OtlpReceiver.start();
    // Nothing is exported on the SDK's schedule during the test: only the flush at shutdown can send the spans.
    const service = await startService(build.entry, {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.endpoint}/v1/traces`,
      OTEL_BSP_SCHEDULE_DELAY: '600000',
      OTEL_SERVICE_NAME: 'governance-stopping',
    });
    try {
      const org = await newOrganization(service);
      const requestId = randomUUID();
      expect((await ingest(service, org.key, 'last words', requestId)).status).toBe(201);
      const line = await completion(service, requestId);
      expect(otlp.requests).toEqual([]);

      const exit = await service.stop();
      expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
      expect(otlp.requests.map((r) => [r.path, r.contentType])).toContainEqual([
        '/v1/traces',
        'application/x-protobuf',
      ]);
      const exported = await Promise.all(
        otlp.protobufBodies.map((body) => decodeOtlpTraces(body, 'application/x-protobuf')),
      );
      const resources = exported.flatMap((e) => e.resourceSpans);
      const spans = resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
      expect(resources.map((r) => r.resource.attributes['service.name'])).toContain('governance-stopping');
      expect(spans.find((s) => s.traceId === line.trace_id && s.kind === SERVER)?.name).toBe(
        'POST /api/v1/traces',
      );
      expect(spans.some((s) => s.traceId === line.trace_id && s.name === 'trace-writer.batch')).toBe(true);
    } finally {
      await service.stop();
      await otlp.close();
    }
  });
});

// The test starts the built service itself: on PGlite (the database inside the service, migrations included) on a
// loaded machine, start-up alone may take most of the default 30 s, and startService waits up to 60 s.
describe('tracing off by default', { timeout: 120_000 }, () => {
  it('starts no exporter and writes no trace ids when no OTEL_* variable asks for traces', async () => {
    // Where the SDK exports by default, had one been started: localhost:4318 (if the port is free here).
    const fallback = await OtlpReceiver.start(4318).catch(() => undefined);
    const hooks = await WebhookReceiver.start();
    const service = await startService(build.entry, {
      OTEL_SERVICE_NAME: 'governance-service',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    try {
      const org = await newOrganization(service, hooks.url);
      const requestId = randomUUID();
      expect((await ingest(service, org.key, 'untraced', requestId)).status).toBe(201);
      await completion(service, requestId);
      await hooks.waitFor(1);
      await new Promise((resolve) => setTimeout(resolve, 500));

      expect(service.logs.filter((l) => l.reqId === requestId).length).toBeGreaterThan(0);
      expect(service.logs.filter((l) => 'trace_id' in l || 'span_id' in l)).toEqual([]);
      expect(hooks.received[0]!.headers.traceparent).toBeUndefined();
      expect(fallback?.requests ?? []).toEqual([]);
    } finally {
      await service.stop();
      await hooks.close();
      await fallback?.close();
    }
  });
});
