import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { scrape } from './support/metrics-scrape.js';
import { scimOrganization, SCIM } from './support/scim.js';

// Label values come from closed sets: a route is its template, never the path a client sent. A thousand requests
// to distinct ids, existing and not, across a few id routes and paths no route matches, leave no id in any label
// and a bounded number of series (docs/operators.md, "Metrics").

const TOKEN = 'metrics-cardinality-token-0123456789-abc';
const REQUESTS = 1000;

const OBJECT_ID = /[0-9a-f]{24}/i;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const LONG_DIGITS = /\d{7,}/;

describe('metric label cardinality', () => {
  let ctx: TestContext;
  let owner: Registered;
  let scimToken: string;
  const agentIds: string[] = [];
  const policyIds: string[] = [];

  beforeAll(async () => {
    ctx = await TestContext.create({ config: { metrics: { enabled: true, host: '127.0.0.1', token: TOKEN } } });
    const scim = await scimOrganization(ctx, 'Cardinality');
    owner = scim.owner;
    scimToken = scim.token;
    for (let i = 0; i < 5; i++) {
      agentIds.push((await ctx.newAgent(owner.organization.id, `Agent ${i}`)).id);
      policyIds.push(
        await ctx.newPolicy(owner.organization.id, {
          name: `Policy ${i}`,
          outcome: 'flag',
          conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }],
        }),
      );
    }
  });
  afterAll(async () => ctx?.close());

  /** The i-th id: an existing one now and then, otherwise an ObjectId, a UUID or a long number nobody has. */
  function idFor(i: number, existing: string[]): string {
    if (i % 10 === 0) return existing[(i / 10) % existing.length]!;
    return [newId(), randomUUID(), `${Date.now()}${i}`][i % 3]!;
  }

  /** The routes the requests go to, by (method, template) as the labels must show them. */
  const targets: { route: string; url: (i: number) => string; scim?: true }[] = [
    { route: '/api/v1/agents/:id', url: (i) => `/api/v1/agents/${idFor(i, agentIds)}` },
    { route: '/api/v1/policies/:id', url: (i) => `/api/v1/policies/${idFor(i, policyIds)}` },
    { route: '/api/v1/traces/:id', url: (i) => `/api/v1/traces/${idFor(i, [newId()])}` },
    { route: '/scim/v2/Users/:id', url: (i) => `${SCIM}/Users/${idFor(i, [randomUUID()])}`, scim: true },
    {
      route: 'unmatched',
      url: (i) => `/api/v1/organizations/${idFor(i, [newId()])}/no-such/${randomUUID()}`,
    },
    { route: 'unmatched', url: (i) => `/${idFor(i, [randomUUID()])}` },
  ];

  it('keeps ids out of every label, and the HTTP series bounded by the routes hit', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < REQUESTS; i++) {
      const target = targets[i % targets.length]!;
      const res = await ctx.get(target.url(i), { token: target.scim ? scimToken : owner.token });
      statuses.add(res.statusCode);
    }
    // Existing ids and missing ones both: successes and 404s.
    expect(statuses).toContain(200);
    expect(statuses).toContain(404);

    const exposition = await scrape(ctx, TOKEN);
    const offending = exposition.samples.flatMap((sample) =>
      Object.entries(sample.labels)
        .filter(([, value]) => OBJECT_ID.test(value) || UUID.test(value) || LONG_DIGITS.test(value))
        .map(([label, value]) => `${sample.name}{${label}="${value}"}`),
    );
    expect(offending).toEqual([]);

    // The routes this file hit: the targets, the set-up's (sign-up, the SCIM token) and the scrape.
    const hit = new Set([
      ...targets.map((t) => `GET ${t.route}`),
      'POST /api/v1/auth/register',
      'POST /api/v1/sso/scim-token',
      'GET /metrics',
    ]);
    const series = exposition.select('governance_http_request_duration_seconds_count');
    const routes = new Set(series.map((s) => `${s.labels.method} ${s.labels.route}`));
    expect([...routes].filter((r) => !hit.has(r))).toEqual([]);
    // At most one series per route hit and status class (1xx to 5xx).
    expect(series.length).toBeLessThanOrEqual(hit.size * 5);
    expect(series.reduce((total, s) => total + s.value, 0)).toBeGreaterThanOrEqual(REQUESTS);
    // Every bucket line belongs to one of those series: nothing else grows with the requests.
    const buckets = exposition.select('governance_http_request_duration_seconds_bucket');
    expect(buckets.length % series.length).toBe(0);
    expect(buckets.length / series.length).toBeLessThanOrEqual(20);
  });
});
