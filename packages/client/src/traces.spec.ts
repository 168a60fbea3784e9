import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGovernanceClient } from './client.js';
import { GovernanceError } from './errors.js';
import { DEFAULT_RETRY, MAX_TIMER_MS, resolveRetry, retryDelayMs } from './retry.js';
import { BASE, failure, fakeFetch, json, type SeenRequest } from './spec/fake-fetch.js';

const TRACE = {
  inputContext: { prompt: 'Refund order A-1042?' },
  outputDecision: { action: 'refund', text: 'Refund it' },
};
const ID = 'c'.repeat(24);
const FAST = { initialDelayMs: 1, maxDelayMs: 5 };

const approved = () =>
  json(201, {
    success: true,
    data: { id: ID, status: 'approved', confidence: 0.9, message: 'Trace recorded and approved' },
  });
const flagged = () =>
  json(202, {
    success: true,
    code: 'SVC_FLAGGED_FOR_REVIEW',
    data: {
      id: ID,
      status: 'flagged',
      confidence: 0.4,
      message: 'Trace flagged for human review',
      reviewItemId: 'r'.repeat(24),
    },
  });
const POLICIES = [{ policyId: 'p'.repeat(24), name: 'No refunds', outcome: 'block' }];
const blocked = () =>
  json(403, {
    success: false,
    error: 'Trace blocked by policy: No refunds',
    code: 'SVC_BLOCKED_BY_POLICY',
    data: { id: ID, status: 'blocked', confidence: 0.9, policies: POLICIES },
  });

function agentClient(handler: (r: SeenRequest, i: number) => Response | Promise<Response>) {
  const fake = fakeFetch(handler);
  return {
    ...fake,
    client: createGovernanceClient({
      baseUrl: BASE,
      fetch: fake.fetch,
      credentials: { apiKey: 'svc_agent_x' },
      retry: FAST,
    }),
  };
}

describe('sendTrace', () => {
  it('resolves to each verdict from the service’s answer', async () => {
    const answers = [approved, flagged, blocked];
    const { client } = agentClient((_r, i) => answers[i]!());
    expect(await client.sendTrace(TRACE)).toMatchObject({
      verdict: 'approved',
      trace: { id: ID, status: 'approved', confidence: 0.9 },
      matchedPolicies: null,
      reviewItemId: null,
      attempts: 1,
      duplicate: false,
    });
    expect(await client.sendTrace(TRACE)).toMatchObject({
      verdict: 'flagged',
      reviewItemId: 'r'.repeat(24),
      message: 'Trace flagged for human review',
    });
    expect(await client.sendTrace(TRACE)).toMatchObject({
      verdict: 'blocked',
      matchedPolicies: POLICIES,
      message: 'Trace blocked by policy: No refunds',
    });
  });

  it('sends a UUID Idempotency-Key, the same on every retry, and retries network errors', async () => {
    const { client, seen } = agentClient((_r, i) => {
      if (i < 2) throw new TypeError('fetch failed');
      return approved();
    });
    const result = await client.sendTrace(TRACE);
    expect(result).toMatchObject({ verdict: 'approved', attempts: 3 });
    const keys = seen.map((r) => r.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).toBe(1);
    expect(result.idempotencyKey).toBe(keys[0]);
    expect(seen.every((r) => r.body === JSON.stringify(TRACE))).toBe(true);
    // Another call is another trace: another key.
    await client.sendTrace(TRACE);
    expect(seen[3]!.headers.get('idempotency-key')).not.toBe(keys[0]);
  });

  it('retries a 503 and gives up after maxAttempts with the last error', async () => {
    const { client, seen } = agentClient(() => failure(503, 'SERVICE_UNAVAILABLE', 'Saturated', {}));
    const error = await client.sendTrace(TRACE, { retry: { maxAttempts: 3 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GovernanceError);
    expect(error).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(seen).toHaveLength(3);
  });

  it('waits what Retry-After asks before the next attempt, and only the backoff without it', async () => {
    const gapWith = async (headers: Record<string, string>) => {
      const times: number[] = [];
      const { client } = agentClient((_r, i) => {
        times.push(Date.now());
        return i === 0
          ? json(503, { success: false, error: 'Saturated', code: 'SERVICE_UNAVAILABLE' }, headers)
          : approved();
      });
      await client.sendTrace(TRACE, { retry: { maxDelayMs: 2000 } });
      expect(times).toHaveLength(2);
      return times[1]! - times[0]!;
    };
    expect(await gapWith({ 'retry-after': '1' })).toBeGreaterThanOrEqual(950);
    expect(await gapWith({})).toBeLessThan(500);
  });

  it('does not retry what another attempt cannot change (400, 401, 403)', async () => {
    for (const [status, code] of [
      [400, 'VALIDATION_ERROR'],
      [401, 'UNAUTHORIZED'],
      [403, 'FORBIDDEN'],
    ] as const) {
      const { client, seen } = agentClient(() => failure(status, code));
      await expect(client.sendTrace(TRACE)).rejects.toMatchObject({ status, code });
      expect(seen).toHaveLength(1);
    }
  });

  it('reads back a trace an earlier attempt stored when the retry answers 409 SVC_DUPLICATE_REQUEST', async () => {
    const { fetch, seen } = fakeFetch((r, i) => {
      if (r.method === 'GET') {
        return json(200, {
          success: true,
          data: {
            id: ID,
            status: 'flagged',
            confidence: 0.4,
            policyResults: POLICIES,
            reviewItemId: 'r'.repeat(24),
          },
        });
      }
      if (i === 0) throw new TypeError('fetch failed: socket hang up');
      return failure(409, 'SVC_DUPLICATE_REQUEST', 'Already ingested', { data: { id: ID } });
    });
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: { apiKey: 'svc_live_x' },
      retry: FAST,
    });
    expect(await client.sendTrace({ ...TRACE, agentId: 'a'.repeat(24) })).toMatchObject({
      verdict: 'flagged',
      trace: { id: ID, status: 'flagged' },
      matchedPolicies: POLICIES,
      reviewItemId: 'r'.repeat(24),
      duplicate: true,
      attempts: 2,
    });
    expect(seen.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      'POST /api/v1/traces',
      'POST /api/v1/traces',
      `GET /api/v1/traces/${ID}`,
    ]);
  });

  it('throws the 409 with the stored trace’s id when the credentials cannot read it (an agent key)', async () => {
    const { client } = agentClient((r) =>
      r.method === 'GET'
        ? failure(403, 'FORBIDDEN')
        : failure(409, 'SVC_DUPLICATE_REQUEST', 'Already ingested', { data: { id: ID } }),
    );
    const error = (await client
      .sendTrace(TRACE, { idempotencyKey: 'order-A-1042' })
      .catch((e: unknown) => e)) as GovernanceError;
    expect(error).toMatchObject({ status: 409, code: 'SVC_DUPLICATE_REQUEST', data: { id: ID } });
  });

  it('stops retrying when the signal aborts', async () => {
    const controller = new AbortController();
    const { client, seen } = agentClient(() => {
      controller.abort();
      throw new TypeError('fetch failed');
    });
    await expect(client.sendTrace(TRACE, { signal: controller.signal })).rejects.toBeDefined();
    expect(seen).toHaveLength(1);
  });
});

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('sendTrace: what is retried', () => {
  it('retries 502 and 504 too, and a 429 with a Retry-After, with the same key', async () => {
    for (const first of [
      () => failure(502, 'SEND_FAILED'),
      () => new Response('<html>Bad gateway</html>', { status: 502 }),
      () => new Response('Gateway Timeout', { status: 504 }),
      () => failure(429, 'RATE_LIMIT_EXCEEDED', 'Slow down', {}),
    ]) {
      const { client, seen } = agentClient((_r, i) => {
        if (i > 0) return approved();
        const response = first();
        if (response.status === 429) response.headers.set('retry-after', '0');
        return response;
      });
      expect(await client.sendTrace(TRACE)).toMatchObject({ verdict: 'approved', attempts: 2 });
      expect(new Set(seen.map((r) => r.headers.get('idempotency-key'))).size).toBe(1);
    }
  });

  it('does not retry a 429 without Retry-After, or one that asks for longer than maxDelayMs', async () => {
    for (const headers of [{}, { 'retry-after': '60' }] as Record<string, string>[]) {
      const { client, seen } = agentClient(() =>
        json(429, { success: false, error: 'Slow down', code: 'RATE_LIMIT_EXCEEDED' }, headers),
      );
      await expect(client.sendTrace(TRACE)).rejects.toMatchObject({
        status: 429,
        code: 'RATE_LIMIT_EXCEEDED',
      });
      expect(seen).toHaveLength(1);
    }
  });

  it('does not send again when a 2xx answer cannot be read (not JSON, not an outcome)', async () => {
    const answers = [
      () => new Response('<html>Accepted</html>', { status: 201, headers: { 'content-type': 'text/html' } }),
      () => new Response('{"success": tru', { status: 201, headers: { 'content-type': 'application/json' } }),
      () => json(201, { success: true, data: null }),
      () => json(201, { success: true, data: { id: ID } }),
      // Flagged without its review item: a shape error of the client's own reading.
      () => json(202, { success: true, data: { id: ID, status: 'flagged', confidence: 0.4 } }),
    ];
    for (const answer of answers) {
      const { client, seen } = agentClient(() => answer());
      const error = await client.sendTrace(TRACE).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect(seen).toHaveLength(1);
    }
  });
});

describe('sendTrace: the retry options', () => {
  it('keeps the default attempts when maxAttempts is given as undefined (no endless retries)', async () => {
    const { client, seen } = agentClient((_r, i) =>
      i < 20 ? failure(503, 'SERVICE_UNAVAILABLE') : approved(),
    );
    await expect(client.sendTrace(TRACE, { retry: { maxAttempts: undefined } })).rejects.toMatchObject({
      status: 503,
    });
    expect(seen).toHaveLength(DEFAULT_RETRY.maxAttempts);
  });

  it('keeps the default backoff when initialDelayMs is given as undefined', async () => {
    const times: number[] = [];
    const { fetch } = fakeFetch((_r, i) => {
      times.push(Date.now());
      return i === 0 ? failure(503, 'SERVICE_UNAVAILABLE') : approved();
    });
    const client = createGovernanceClient({
      baseUrl: BASE,
      fetch,
      credentials: { apiKey: 'svc_agent_x' },
      retry: { initialDelayMs: undefined, maxDelayMs: undefined },
    });
    await client.sendTrace(TRACE, { retry: { initialDelayMs: undefined } });
    // 250 ms with jitter: at least half of it.
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(120);
  });

  it('merges value by value: the call’s over the client’s over the defaults', () => {
    expect(
      resolveRetry({ maxAttempts: 2, initialDelayMs: 10 }, { initialDelayMs: undefined, maxDelayMs: 99 }),
    ).toEqual({
      maxAttempts: 2,
      initialDelayMs: 10,
      maxDelayMs: 99,
    });
    expect(resolveRetry(undefined, { maxAttempts: undefined })).toEqual(DEFAULT_RETRY);
  });

  it('refuses values that are not usable (TypeError), before sending anything', async () => {
    const { client, seen } = agentClient(() => approved());
    for (const retry of [
      { maxAttempts: 0 },
      { maxAttempts: 1.5 },
      { maxAttempts: Number.NaN },
      { maxAttempts: Number.POSITIVE_INFINITY },
      { initialDelayMs: -1 },
      { initialDelayMs: Number.NaN },
      { maxDelayMs: Number.POSITIVE_INFINITY },
    ]) {
      await expect(client.sendTrace(TRACE, { retry })).rejects.toThrow(TypeError);
      expect(() => createGovernanceClient({ baseUrl: BASE, retry })).toThrow(TypeError);
    }
    expect(seen).toHaveLength(0);
  });
});

describe('sendTrace: the idempotency key without crypto.randomUUID (a page served over plain HTTP)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('makes a version 4 UUID from crypto.getRandomValues', async () => {
    const real = globalThis.crypto;
    vi.stubGlobal('crypto', {
      getRandomValues: <T extends ArrayBufferView>(array: T) => real.getRandomValues(array as never) as T,
      subtle: real.subtle,
    });
    expect((globalThis.crypto as { randomUUID?: unknown }).randomUUID).toBeUndefined();
    const { client, seen } = agentClient(() => approved());
    await client.sendTrace(TRACE);
    await client.sendTrace(TRACE);
    const keys = seen.map((r) => r.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(UUID_V4);
    expect(keys[1]).toMatch(UUID_V4);
    expect(keys[0]).not.toBe(keys[1]);
  });
});

describe('retryDelayMs', () => {
  const policy = { ...DEFAULT_RETRY, initialDelayMs: 100, maxDelayMs: 1000 };

  it('doubles from the initial delay, with jitter between half and all of it, up to the maximum', () => {
    expect(retryDelayMs(1, policy, undefined, () => 1)).toBe(100);
    expect(retryDelayMs(2, policy, undefined, () => 1)).toBe(200);
    expect(retryDelayMs(3, policy, undefined, () => 0)).toBe(200);
    expect(retryDelayMs(10, policy, undefined, () => 1)).toBe(1000);
  });

  it('waits at least what Retry-After asked, within the maximum', () => {
    expect(retryDelayMs(1, policy, 0.5, () => 0)).toBe(500);
    expect(retryDelayMs(1, policy, 5, () => 0)).toBe(1000);
  });

  it('never gives a delay a timer cannot take', () => {
    expect(retryDelayMs(60, { ...policy, maxDelayMs: 2 ** 40 }, 10 ** 9, () => 1)).toBe(MAX_TIMER_MS);
  });
});
