import { RedirectRefusedError } from './credentials.js';
import { GovernanceError } from './errors.js';
import { resolveRetry, type RetryOptions, retryDelayMs, sleep } from './retry.js';
import type { ApiClient, Schemas } from './types.js';

/** The body of `POST /traces`. */
export type TraceInput = Schemas['IngestTraceDto'];

/** A policy that matched a trace. */
export type PolicyMatch = Schemas['PolicyResultDto'];

export type Verdict = 'approved' | 'flagged' | 'blocked';

interface TraceOutcome<V extends Verdict> {
  /** What the policies decided: `approved` (201), `flagged` for human review (202), `blocked` (403). */
  verdict: V;
  /** The stored trace: its id, status and confidence (given, or estimated from the output). */
  trace: { id: string; status: V; confidence: number };
  /**
   * The policies that matched, when the answer names them: always for a blocked trace; `null` when it does not
   * (the service's 201 and 202 answers do not list them; read `GET /traces/:id` with a session or workspace key).
   */
  matchedPolicies: PolicyMatch[] | null;
  /** The service's message. */
  message: string;
  /** The `Idempotency-Key` sent with every attempt. */
  idempotencyKey: string;
  /** How many requests it took. */
  attempts: number;
  /**
   * True when the key had been used already (by an earlier attempt whose answer was lost, or an earlier call with
   * the same `idempotencyKey`): the service answered 409 `SVC_DUPLICATE_REQUEST` and the outcome was read back with
   * `GET /traces/:id` (the status is then the trace's current one, a review may have changed it).
   */
  duplicate: boolean;
}

/** What `sendTrace` resolves to. */
export type TraceResult =
  | (TraceOutcome<'approved'> & { reviewItemId: string | null })
  | (TraceOutcome<'flagged'> & { reviewItemId: string })
  | (TraceOutcome<'blocked'> & { reviewItemId: string | null; matchedPolicies: PolicyMatch[] });

export interface SendTraceOptions {
  /** Sent as `Idempotency-Key` on every attempt (default: a random UUID). */
  idempotencyKey?: string;
  /**
   * Retries on network errors, 502, 503, 504 and a 429 with `Retry-After` (default: the client's `retry`, else 5
   * attempts from 250 ms). Each value given overrides the client's; `undefined` keeps it. `TypeError` if not usable.
   */
  retry?: RetryOptions;
  /** Extra headers. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export interface TraceContext {
  api: ApiClient;
  retry: RetryOptions | undefined;
}

/**
 * `POST /traces` with an `Idempotency-Key` kept across retries: a network error, a 502, 503 or 504, or a 429 whose
 * `Retry-After` is within `maxDelayMs`, is retried (after `Retry-After` when given, with exponential backoff, a
 * bounded number of times), so a trace is stored once however often it is sent. Only the request is retried: an
 * answer that cannot be read (a 2xx whose body is not the outcome) throws at once. A blocked trace resolves (verdict
 * `blocked`) rather than throwing; any other failure throws `GovernanceError`.
 */
export async function sendTrace(
  context: TraceContext,
  body: TraceInput,
  options: SendTraceOptions = {},
): Promise<TraceResult> {
  const policy = resolveRetry(context.retry, options.retry);
  const idempotencyKey = options.idempotencyKey ?? randomUuid();
  for (let attempt = 1; ; attempt++) {
    let retryAfterSeconds: number | undefined;
    let failure: unknown;
    let answer: { data?: string; error?: unknown; response: Response } | undefined;
    try {
      // The body is read as text and parsed below, outside this try: only the exchange itself is retried.
      answer = await context.api.POST('/api/v1/traces', {
        body,
        headers: { ...options.headers, 'Idempotency-Key': idempotencyKey },
        signal: options.signal,
        parseAs: 'text',
      });
    } catch (error) {
      if (options.signal?.aborted || error instanceof RedirectRefusedError) throw error;
      // The request may have reached the service: the same key makes sending it again safe.
      failure = error;
    }
    if (answer) {
      const { data, error, response } = answer;
      const extra = { idempotencyKey, attempts: attempt, duplicate: false };
      if (response.ok) return resultOf(parseOutcome(data), extra);
      if (response.status === 403 && isBlocked(error)) return resultOf(error, extra);
      const governanceError = GovernanceError.from(response, error);
      if (governanceError.code === 'SVC_DUPLICATE_REQUEST') {
        return duplicateOf(context, governanceError, { idempotencyKey, attempts: attempt });
      }
      if (!isRetryable(governanceError, policy.maxDelayMs)) throw governanceError;
      failure = governanceError;
      retryAfterSeconds = governanceError.retryAfterSeconds;
    }
    if (attempt >= policy.maxAttempts) throw failure;
    await sleep(retryDelayMs(attempt, policy, retryAfterSeconds), options.signal);
  }
}

/**
 * What another attempt may change: the service saturated or a gateway without its answer (502, 503, 504), or a rate
 * limit that says when to come back, within the longest delay allowed.
 */
function isRetryable(error: GovernanceError, maxDelayMs: number): boolean {
  if (error.status === 502 || error.status === 503 || error.status === 504) return true;
  return (
    error.status === 429 &&
    error.retryAfterSeconds !== undefined &&
    error.retryAfterSeconds * 1000 <= maxDelayMs
  );
}

/** A success's body, parsed (a body that is not JSON throws: sending the trace again would not change it). */
function parseOutcome(text: string | undefined): unknown {
  if (text === undefined || text === '') throw new TypeError('POST /traces answered without a body');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new TypeError('POST /traces answered a body that is not JSON');
  }
}

/**
 * A random UUID (version 4) for the `Idempotency-Key`: `crypto.randomUUID` where there is one (it exists in secure
 * contexts only: not on a page served over plain HTTP), else from `crypto.getRandomValues`.
 */
export function randomUuid(): string {
  const crypto = globalThis.crypto as unknown as {
    randomUUID?: () => string;
    getRandomValues(array: Uint8Array): Uint8Array;
  };
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

interface Answer {
  id: string;
  status: Verdict;
  confidence: number;
  message?: string;
  reviewItemId?: string | null;
  policies?: PolicyMatch[];
}

function isBlocked(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    (body as { code?: unknown }).code === 'SVC_BLOCKED_BY_POLICY' &&
    typeof (body as { data?: unknown }).data === 'object'
  );
}

function resultOf(
  body: unknown,
  extra: { idempotencyKey: string; attempts: number; duplicate: boolean },
): TraceResult {
  const envelope = body as { data?: unknown; error?: unknown } | null;
  const answer = typeof envelope === 'object' && envelope !== null ? envelope.data : undefined;
  if (!isAnswer(answer)) throw new TypeError('POST /traces answered a body that is not a trace’s outcome');
  const common = {
    trace: { id: answer.id, confidence: answer.confidence },
    message: answer.message ?? (typeof envelope!.error === 'string' ? envelope!.error : ''),
    matchedPolicies: answer.policies ?? null,
    ...extra,
  };
  return withVerdict(answer.status, common, answer.reviewItemId ?? null);
}

function isAnswer(value: unknown): value is Answer {
  if (typeof value !== 'object' || value === null) return false;
  const answer = value as Record<string, unknown>;
  return (
    typeof answer.id === 'string' &&
    typeof answer.status === 'string' &&
    typeof answer.confidence === 'number'
  );
}

function withVerdict(
  status: string,
  common: Omit<TraceOutcome<Verdict>, 'verdict' | 'trace'> & { trace: { id: string; confidence: number } },
  reviewItemId: string | null,
): TraceResult {
  switch (status) {
    case 'blocked':
      return {
        ...common,
        verdict: 'blocked',
        trace: { ...common.trace, status: 'blocked' },
        matchedPolicies: common.matchedPolicies ?? [],
        reviewItemId,
      };
    case 'flagged':
      if (reviewItemId === null) throw new TypeError('A flagged trace without its review item');
      return { ...common, verdict: 'flagged', trace: { ...common.trace, status: 'flagged' }, reviewItemId };
    default:
      // `success` (OTLP spans) and `approved` are both accepted outcomes.
      return { ...common, verdict: 'approved', trace: { ...common.trace, status: 'approved' }, reviewItemId };
  }
}

/**
 * A retry that found the trace stored: the 409 names its id only, so its outcome is read back. Agent keys cannot
 * read traces; then the 409 is thrown (`error.data.id` is the stored trace).
 */
async function duplicateOf(
  context: TraceContext,
  duplicate: GovernanceError,
  extra: { idempotencyKey: string; attempts: number },
): Promise<TraceResult> {
  const id = (duplicate.data as { id?: unknown } | undefined)?.id;
  if (typeof id !== 'string') throw duplicate;
  // Read back once; if that fails (an agent key may not read traces, or the network), the 409 says it is stored.
  const read = await context.api
    .GET('/api/v1/traces/{id}', { params: { path: { id } } })
    .catch(() => undefined);
  if (!read || !read.response.ok || !read.data) throw duplicate;
  const data = read.data;
  const trace: Schemas['TraceDto'] = data.data;
  return withVerdict(
    trace.status,
    {
      trace: { id: trace.id, confidence: trace.confidence },
      message: duplicate.message,
      matchedPolicies: trace.policyResults,
      ...extra,
      duplicate: true,
    },
    trace.reviewItemId,
  );
}
