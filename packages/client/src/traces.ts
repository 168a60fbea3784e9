import { GovernanceError } from './errors.js';
import { DEFAULT_RETRY, type RetryOptions, retryDelayMs, sleep } from './retry.js';
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
  /** Retries on network errors and 503 (default: the client's `retry`, else 5 attempts from 250 ms). */
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
 * `POST /traces` with an `Idempotency-Key` kept across retries: a network error or a 503 is retried (after
 * `Retry-After` when given, with exponential backoff, a bounded number of times), so a trace is stored once however
 * often it is sent. A blocked trace resolves (verdict `blocked`) rather than throwing; any other failure throws
 * `GovernanceError`.
 */
export async function sendTrace(
  context: TraceContext,
  body: TraceInput,
  options: SendTraceOptions = {},
): Promise<TraceResult> {
  const policy = { ...DEFAULT_RETRY, ...context.retry, ...options.retry };
  const idempotencyKey = options.idempotencyKey ?? globalThis.crypto.randomUUID();
  for (let attempt = 1; ; attempt++) {
    let retryAfterSeconds: number | undefined;
    let failure: unknown;
    try {
      const { data, error, response } = await context.api.POST('/api/v1/traces', {
        body,
        headers: { ...options.headers, 'Idempotency-Key': idempotencyKey },
        signal: options.signal,
      });
      const outcome = data ?? error;
      if (response.ok || (response.status === 403 && isBlocked(outcome))) {
        return resultOf(outcome, { idempotencyKey, attempts: attempt, duplicate: false });
      }
      const governanceError = GovernanceError.from(response, error);
      if (governanceError.code === 'SVC_DUPLICATE_REQUEST') {
        return await duplicateOf(context, governanceError, { idempotencyKey, attempts: attempt });
      }
      if (response.status !== 503) throw governanceError;
      failure = governanceError;
      retryAfterSeconds = governanceError.retryAfterSeconds;
    } catch (error) {
      if (error instanceof GovernanceError || options.signal?.aborted) throw error;
      // The request may have reached the service: the same key makes sending it again safe.
      failure = error;
    }
    if (attempt >= policy.maxAttempts) throw failure;
    await sleep(retryDelayMs(attempt, policy, retryAfterSeconds), options.signal);
  }
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
  const envelope = body as { data: Answer; error?: string };
  const answer = envelope.data;
  const common = {
    trace: { id: answer.id, confidence: answer.confidence },
    message: answer.message ?? envelope.error ?? '',
    matchedPolicies: answer.policies ?? null,
    ...extra,
  };
  return withVerdict(answer.status, common, answer.reviewItemId ?? null);
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
  const { data, response } = await context.api.GET('/api/v1/traces/{id}', { params: { path: { id } } });
  if (!response.ok || !data) throw duplicate;
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
