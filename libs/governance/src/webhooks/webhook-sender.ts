import { type Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { type Span, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { resolveTarget, type SpanSettings, SsrfRefusal, withSpan } from '#platform';

/**
 * A receiver has this long to answer, connection included (docs/dashboard-developers.md,
 * "Review, approval patterns, webhooks and the event stream").
 */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** What is kept of a receiver's answer. */
export const RESPONSE_BODY_MAX = 1024;
/** Past this much, an answer is not read further. */
const RESPONSE_READ_MAX = 64 * 1024;
/** A `Retry-After` is honoured up to this long. */
export const RETRY_AFTER_MAX_MS = 6 * 3600 * 1000;

export interface SendResult {
  /** The receiver's HTTP status; absent when no answer came (refused, unreachable, timed out). */
  status?: number;
  /** The start of the answer's body. */
  body?: string;
  /** Why the attempt failed without an answer, or with a non-2xx one. */
  error?: string;
  /** From `Retry-After` on a 429 or 503. */
  retryAfterMs?: number;
  /** The target was refused by the SSRF guard. */
  refused?: boolean;
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds from `nowMs`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d{1,10}$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return undefined;
    ms = at - nowMs;
  }
  return Math.min(Math.max(ms, 1000), RETRY_AFTER_MAX_MS);
}

/**
 * Sends one signed POST: the host is resolved and checked by the SSRF guard first, and the connection goes to the
 * address checked; redirects are not followed (a 3xx is a failure); the whole exchange has 10 seconds; only the
 * first 1 KiB of the answer is read. Never throws. Traced as a `webhook.send` span when tracing is on.
 */
export function sendWebhook(...args: Parameters<typeof post>): Promise<SendResult> {
  return withSpan(
    'webhook.send',
    async (span) => {
      const result = await post(...args);
      if (span) recordSend(span, result);
      return result;
    },
    () => sendSpan(args[0]),
  );
}

/**
 * A send's span: the receiver's host, never its URL (a receiver's URL may carry its secret). The service's own
 * HTTP client spans are off (apps/api/src/tracing.ts), so this is the delivery's client span.
 */
function sendSpan(url: string): SpanSettings {
  let host: string | undefined;
  try {
    host = new URL(url).hostname;
  } catch {
    // An invalid URL fails the attempt; its span has no host.
  }
  return {
    kind: SpanKind.CLIENT,
    attributes: { 'http.request.method': 'POST', ...(host ? { 'server.address': host } : {}) },
  };
}

/**
 * The answer's status, and a failed attempt (no answer, a non-2xx one, a refused target) as the span's error, in
 * words of its own: the error's are the resolver's, the socket's or the guard's, which quote addresses.
 */
function recordSend(span: Span, result: SendResult): void {
  if (result.status !== undefined) span.setAttribute('http.response.status_code', result.status);
  if (result.refused) span.setAttribute('governance.webhook.refused', true);
  if (result.error === undefined) return;
  const failure =
    result.status !== undefined
      ? `The receiver answered ${result.status}`
      : result.refused
        ? 'The target was refused'
        : 'No answer';
  span.setStatus({ code: SpanStatusCode.ERROR, message: failure });
}

/** The POST of `sendWebhook`. */
async function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: {
    allowPrivate: boolean;
    nowMs: number;
    timeoutMs?: number;
    /** Keep-alive agents: connections are reused per host and port (each opened to an address the guard checked). */
    agents?: { http: HttpAgent; https: HttpsAgent };
  },
): Promise<SendResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { error: 'The URL is not valid' };
  }
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const deadline = AbortSignal.timeout(timeoutMs);
  let resolved;
  try {
    resolved = await resolveTarget(target, options.allowPrivate);
  } catch (err) {
    if (err instanceof SsrfRefusal) return { error: err.message, refused: true };
    return { error: `DNS: ${(err as Error).message}`.slice(0, 500) };
  }
  const pinned: LookupFunction = (_host, opts, callback) => {
    if ((opts as { all?: boolean }).all) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [resolved]);
    } else callback(null, resolved.address, resolved.family);
  };
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: SendResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const req = send(target, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body).toString(),
        'user-agent': 'governance-service-webhooks/1',
      },
      lookup: pinned,
      signal: deadline,
      agent: (target.protocol === 'https:' ? options.agents?.https : options.agents?.http) ?? false,
    });
    req.on('response', (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        const status = res.statusCode ?? 0;
        const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_MAX).toString('utf8');
        const retryAfterMs =
          status === 429 || status === 503
            ? parseRetryAfter(res.headers['retry-after'], options.nowMs)
            : undefined;
        finish({
          status,
          body: text,
          ...(status >= 200 && status < 300 ? {} : { error: `The receiver answered ${status}` }),
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        });
      };
      res.on('data', (chunk: Buffer) => {
        if (size < RESPONSE_BODY_MAX) chunks.push(chunk);
        size += chunk.length;
        // A long answer is not read to its end (the connection is then not reused).
        if (size > RESPONSE_READ_MAX) {
          done();
          res.destroy();
        }
      });
      // Read to the end, so that a keep-alive connection can serve the next attempt.
      res.on('end', done);
      res.on('error', done);
      res.on('close', done);
    });
    req.on('error', (err: Error) => {
      const timedOut = deadline.aborted;
      finish({
        error: timedOut ? `No answer within ${timeoutMs} ms` : `Connection: ${err.message}`.slice(0, 500),
      });
    });
    req.end(body);
  });
}
