import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock, Metrics, MetricsListener } from '#platform';
import { compileTestModule, TestContext, testConfig } from './support/app.js';
import { shareHandle } from './support/database.js';
import { Exposition } from './support/metrics-scrape.js';
import { traceBody } from './support/traces-suite.js';

// /metrics is exposed on the main port behind METRICS_TOKEN, on a listener of its own with METRICS_PORT (the API's
// and the worker's), and nowhere without either (docs/operators.md, "Metrics").

const TOKEN = 'metrics-exposure-token-0123456789-abcdef';
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Nothing of an exposition: no family, no sample of the service's or the runtime's. */
function expectNoMetrics(body: string): void {
  expect(body).not.toMatch(/# (HELP|TYPE)|governance_|process_|nodejs_/);
}

describe('GET /metrics on the main port with METRICS_TOKEN', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ config: { metrics: { enabled: true, host: '127.0.0.1', token: TOKEN } } });
  });
  afterAll(async () => ctx?.close());

  it('answers the exposition in the Prometheus text format to the bearer token', async () => {
    const res = await ctx.get('/metrics', { token: TOKEN });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe(CONTENT_TYPE);
    expect(res.headers['cache-control']).toBe('no-store');
    const exposition = new Exposition(res.body);
    expect(exposition.types.get('governance_http_request_duration_seconds')).toBe('HISTOGRAM');
    expect(exposition.types.get('governance_http_requests_in_flight')).toBe('GAUGE');
    expect(exposition.types.get('governance_logins_total')).toBe('COUNTER');
    expect(exposition.types.get('governance_db_pool_connections')).toBe('GAUGE');
    expect(exposition.types.get('process_cpu_user_seconds_total')).toBe('COUNTER');
    expect(exposition.types.get('nodejs_heap_size_total_bytes')).toBe('GAUGE');
  });

  it.each([
    ['no Authorization header', undefined],
    ['a wrong token of the same length', `Bearer ${'x'.repeat(TOKEN.length)}`],
    ['a shorter token (a prefix of it)', `Bearer ${TOKEN.slice(0, 32)}`],
    ['a longer token', `Bearer ${TOKEN}${TOKEN}`],
    ['the token without the Bearer scheme', TOKEN],
    ['the token as Basic credentials', `Basic ${TOKEN}`],
  ])('answers 401 UNAUTHORIZED in the envelope, and no metric, to %s', async (_what, authorization) => {
    const res = await ctx.get('/metrics', { headers: authorization ? { authorization } : {} });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(res.json()).toEqual({ success: false, error: expect.any(String), code: 'UNAUTHORIZED' });
    expectNoMetrics(res.body);
  });

  it('does not take the token as an API key', async () => {
    const res = await ctx.get('/metrics', { apiKey: TOKEN });
    expect(res.statusCode).toBe(401);
    expectNoMetrics(res.body);
  });
});

describe('GET /metrics on the main port without METRICS_TOKEN', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  it('is 404 like any unknown route, with a bearer token or without', async () => {
    const unknown = (await ctx.get('/no-such-route')).json();
    for (const res of [await ctx.get('/metrics'), await ctx.get('/metrics', { token: TOKEN })]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ ...unknown, error: 'Cannot GET /metrics' });
      expectNoMetrics(res.body);
    }
  });
});

/** GET on the metrics listener, over a real socket. */
async function fetchMetricsPort(port: number, path = '/metrics', method = 'GET', headers: Record<string, string> = {}) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers });
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    challenge: res.headers.get('www-authenticate'),
    body: await res.text(),
  };
}

describe('METRICS_PORT in the API', () => {
  let ctx: TestContext;
  let port: number;
  beforeAll(async () => {
    // Port 0: the system's choice of a free port, which the listener reports.
    ctx = await TestContext.create({ config: { metrics: { enabled: true, host: '127.0.0.1', port: 0 } } });
    port = ctx.service(MetricsListener).port!;
  });
  afterAll(async () => ctx?.close());

  it('listens on a port of its own that answers GET /metrics without credentials', async () => {
    expect(port).toBeGreaterThan(0);
    const res = await fetchMetricsPort(port);
    expect(res.status).toBe(200);
    expect(res.contentType).toBe(CONTENT_TYPE);
    const exposition = new Exposition(res.body);
    expect(exposition.types.get('governance_http_request_duration_seconds')).toBe('HISTOGRAM');
    expect(exposition.types.get('process_resident_memory_bytes')).toBe('GAUGE');
  });

  it('answers nothing else: other paths 404, other methods 405', async () => {
    for (const path of ['/', '/health', '/api/v1/health', '/metrics/x', '/metricsx']) {
      const res = await fetchMetricsPort(port, path);
      expect(res.status, path).toBe(404);
      expectNoMetrics(res.body);
    }
    const post = await fetchMetricsPort(port, '/metrics', 'POST');
    expect(post.status).toBe(405);
    expectNoMetrics(post.body);
  });

  it('leaves /metrics on the main port at 404 when METRICS_TOKEN is not set', async () => {
    const res = await ctx.get('/metrics');
    expect(res.statusCode).toBe(404);
    expectNoMetrics(res.body);
  });
});

describe('METRICS_PORT and METRICS_TOKEN together', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ config: { metrics: { enabled: true, host: '127.0.0.1', port: 0, token: TOKEN } } });
  });
  afterAll(async () => ctx?.close());

  it('serves the same exposition on both, each only to the token', async () => {
    const port = ctx.service(MetricsListener).port!;
    const own = await fetchMetricsPort(port, '/metrics', 'GET', { authorization: `Bearer ${TOKEN}` });
    expect(own.status).toBe(200);
    expect((await ctx.get('/metrics', { token: TOKEN })).statusCode).toBe(200);
    expect((await ctx.get('/metrics')).statusCode).toBe(401);
    const families = (text: string) => [...new Exposition(text).types.keys()].sort();
    expect(families((await ctx.get('/metrics', { token: TOKEN })).body)).toEqual(families(own.body));
  });

  it.each([
    ['no Authorization header', undefined],
    ['a wrong token of the same length', `Bearer ${'x'.repeat(TOKEN.length)}`],
    ['a prefix of the token', `Bearer ${TOKEN.slice(0, 32)}`],
    ['the token without the Bearer scheme', TOKEN],
  ])('refuses the metrics port 401 to %s, with nothing of the metrics', async (_what, authorization) => {
    const port = ctx.service(MetricsListener).port!;
    const res = await fetchMetricsPort(port, '/metrics', 'GET', authorization ? { authorization } : {});
    expect(res.status).toBe(401);
    expect(res.challenge).toBe('Bearer realm="metrics"');
    expectNoMetrics(res.body);
  });
});

describe('METRICS=off', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ config: { metrics: { enabled: false, host: '127.0.0.1' } } });
  });
  afterAll(async () => ctx?.close());

  it('collects nothing: the registry stays empty while the service serves, and no port or route exposes it', async () => {
    const owner = await ctx.register({ organizationName: 'Unmeasured' });
    const agent = await ctx.newAgent(owner.organization.id, 'Unmeasured agent');
    const trace = await ctx.post('/api/v1/traces', { apiKey: agent.key, body: traceBody() });
    expect(trace.statusCode, trace.body).toBe(201);
    expect((await ctx.get('/no-such-route')).statusCode).toBe(404);
    const metrics = ctx.service(Metrics);
    expect(metrics.enabled).toBe(false);
    expect(metrics.registry.getMetricsAsArray()).toEqual([]);
    expect((await metrics.text()).trim()).toBe('');
    expect(ctx.service(MetricsListener).port).toBeUndefined();
    expect((await ctx.get('/metrics', { token: TOKEN })).statusCode).toBe(404);
  });
});

describe('METRICS_PORT in the worker (the modules without an HTTP listener)', () => {
  let api: TestContext;
  beforeAll(async () => {
    api = await TestContext.create();
  });
  afterAll(async () => api?.close());

  /** The worker's application context on the API's database, as apps/worker starts it (without HTTP). */
  async function startWorker(port: number) {
    const config = testConfig({ metrics: { enabled: true, host: '127.0.0.1', port } });
    const worker = await compileTestModule({
      config,
      db: shareHandle(api.db),
      clock: new FixedClock(new Date()),
    });
    return worker;
  }

  it('serves the runtime and sign-in metrics on its own port, without HTTP metrics, until it closes', async () => {
    const worker = await startWorker(0);
    await worker.init();
    const port = worker.get(MetricsListener).port!;
    try {
      const res = await fetchMetricsPort(port);
      expect(res.status).toBe(200);
      const exposition = new Exposition(res.body);
      expect(exposition.types.get('process_cpu_user_seconds_total')).toBe('COUNTER');
      expect(exposition.types.get('governance_logins_total')).toBe('COUNTER');
      expect(exposition.types.get('governance_event_loop_delay_seconds')).toBe('HISTOGRAM');
      expect(exposition.types.has('governance_http_request_duration_seconds')).toBe(false);
    } finally {
      await worker.close();
    }
    await expect(fetchMetricsPort(port)).rejects.toThrow();
  });

  it('stops the start-up when its port is taken, as the main port would', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const worker = await startWorker((taken.address() as { port: number }).port);
    try {
      await expect(worker.init()).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await worker.close();
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
