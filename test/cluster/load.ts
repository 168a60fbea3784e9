import { Agent, request } from 'undici';
import type pg from 'pg';
import { expect } from 'vitest';
import { call } from './support.js';

/** One trace a load client sent: its last answer, and for a keyed one how many times it was sent. */
export interface Outcome {
  marker: number;
  key: string | null;
  /** The final status, or `error` for a connection reset or refusal that a client without a key does not retry. */
  status: number | 'error';
  error?: string;
  traceId?: string;
  servedBy?: string;
  /** When the final answer came (ms since the epoch). */
  at: number;
  attempts: number;
  /** Statuses of the attempts before the last (keyed clients retry 5xx and connection errors). */
  retried: (number | 'error')[];
}

export interface LoadOptions {
  base: string;
  /** Agent keys: trace `marker` goes with key `marker % keys.length`. */
  keys: string[];
  connections: number;
  durationMs: number;
  /** Every `keyedEvery`-th trace carries an Idempotency-Key, and its client retries it until it is answered. */
  keyedEvery?: number;
  /** Markers start here: each run of a file uses its own range. */
  firstMarker?: number;
  /** Every `flaggedEvery`-th trace asks about a refund (the policy a test adds flags it). */
  flaggedEvery?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function loadTraceBody(marker: number, flagged: boolean): string {
  return JSON.stringify({
    inputContext: {
      prompt: flagged ? `Can I get a refund for order ${marker}?` : `What is the status of order ${marker}?`,
    },
    outputDecision: { action: 'answer', text: `Order ${marker} is on its way.` },
    metadata: { marker },
    confidence: 0.9,
  });
}

/**
 * `connections` clients, each on its own keep-alive connection to the proxy, sending traces one after another for
 * `durationMs`. A keyed trace is sent again with the same key after a 5xx or a connection error (up to 20 times,
 * 100 ms apart), as a client that wants exactly one trace would; an unkeyed one is sent once.
 */
export async function runLoad(options: LoadOptions): Promise<Outcome[]> {
  const { base, keys, connections, durationMs, keyedEvery = 4, flaggedEvery = 20 } = options;
  const dispatcher = new Agent({ connections, keepAliveTimeout: 30_000, pipelining: 1 });
  const outcomes: Outcome[] = [];
  let next = options.firstMarker ?? 1;
  const deadline = Date.now() + durationMs;
  const runId = `${process.pid}-${Date.now()}`;

  const send = async (marker: number, key: string | null) => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-api-key': keys[marker % keys.length]!,
    };
    if (key) headers['idempotency-key'] = key;
    try {
      const res = await request(`${base}/api/v1/traces`, {
        method: 'POST',
        headers,
        body: loadTraceBody(marker, marker % flaggedEvery === 0),
        dispatcher,
      });
      const text = await res.body.text();
      let traceId: string | undefined;
      try {
        traceId = (JSON.parse(text) as { data?: { id?: string } }).data?.id;
      } catch {
        /* not JSON (a proxy's error page) */
      }
      const servedBy = res.headers['x-served-by'];
      return {
        status: res.statusCode,
        traceId,
        servedBy: typeof servedBy === 'string' ? servedBy : undefined,
      };
    } catch (err) {
      return { status: 'error' as const, error: (err as { code?: string }).code ?? String(err) };
    }
  };

  const client = async () => {
    while (Date.now() < deadline) {
      const marker = next++;
      const key = marker % keyedEvery === 0 ? `load-${runId}-${marker}` : null;
      const retried: (number | 'error')[] = [];
      let answer = await send(marker, key);
      while (key && (answer.status === 'error' || answer.status >= 500) && retried.length < 20) {
        retried.push(answer.status);
        await sleep(100);
        answer = await send(marker, key);
      }
      outcomes.push({ marker, key, ...answer, at: Date.now(), attempts: retried.length + 1, retried });
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  await dispatcher.close();
  return outcomes;
}

/** An acknowledged trace: the service answered that it is stored (201, 202; 409 for a key already used, with its id). */
export const acknowledged = (o: Outcome) =>
  o.status === 201 || o.status === 202 || (o.key !== null && o.status === 409);

/**
 * What must hold after any load, whatever happened to the processes: every acknowledged trace is stored, under the
 * id it was acknowledged with; no trace is stored twice; a keyed trace is stored once, under the id its client got;
 * and every organization's audit chain is gap-free (sequences 1..n) and verifies.
 */
export async function expectNothingLostOrDoubled(
  db: pg.Pool,
  base: string,
  organizations: { orgId: string; token: string }[],
  outcomes: Outcome[],
): Promise<{ stored: number }> {
  const acked = outcomes.filter(acknowledged);
  const ackedIds = acked.map((o) => o.traceId!);
  expect(ackedIds.every((id) => typeof id === 'string')).toBe(true);
  const markers = outcomes.map((o) => o.marker);
  const { rows } = await db.query<{ id: string; marker: number }>(
    `select id, (metadata->>'marker')::int as marker from traces where (metadata->>'marker')::int = any($1)`,
    [markers],
  );
  const byMarker = new Map<number, string[]>();
  for (const row of rows) byMarker.set(row.marker, [...(byMarker.get(row.marker) ?? []), row.id]);
  const doubled = [...byMarker].filter(([, ids]) => ids.length > 1);
  expect(doubled, 'traces stored twice').toEqual([]);
  const storedIds = new Set(rows.map((r) => r.id));
  const lost = acked.filter((o) => !storedIds.has(o.traceId!));
  expect(lost, 'acknowledged traces that are not stored').toEqual([]);
  for (const o of acked) expect(byMarker.get(o.marker)).toEqual([o.traceId]);

  for (const { orgId, token } of organizations) {
    const { rows: chain } = await db.query<{ n: string; first: string; last: string }>(
      `select count(*) as n, min(sequence) as first, max(sequence) as last from audit_entries where organization_id = $1`,
      [orgId],
    );
    expect(Number(chain[0]!.first)).toBe(1);
    expect(Number(chain[0]!.last)).toBe(Number(chain[0]!.n));
    const verify = await call(base, 'GET', '/api/v1/audit/verify?full=true', { token });
    expect(verify.status).toBe(200);
    expect(verify.body.data).toMatchObject({ valid: true, totalEntries: Number(chain[0]!.n) });
  }
  return { stored: rows.length };
}
