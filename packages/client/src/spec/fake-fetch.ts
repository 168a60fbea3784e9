/** A request as a fake service saw it: its body read as text. */
export interface SeenRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
  /** The request's redirect mode (the client's is `manual`). */
  redirect: Request['redirect'];
  /** The request's signal (a handler that hangs can honour it, as a real fetch does). */
  signal: AbortSignal;
}

export type FakeHandler = (request: SeenRequest, index: number) => Response | Promise<Response>;

/** A fetch that answers from `handler` and records every request (for the unit specs). */
export function fakeFetch(handler: FakeHandler) {
  const seen: SeenRequest[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const entry: SeenRequest = {
      method: request.method,
      url: new URL(request.url),
      headers: new Headers(request.headers),
      body: request.body ? await request.text() : '',
      redirect: request.redirect,
      signal: request.signal,
    };
    seen.push(entry);
    return handler(entry, seen.length - 1);
  };
  return { fetch, seen };
}

/** A JSON answer. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  });
}

/** An error envelope. */
export function failure(
  status: number,
  code: string,
  error = code,
  extra: Record<string, unknown> = {},
): Response {
  return json(status, { success: false, error, code, ...extra }, { 'x-request-id': `req-${status}` });
}

/** A body that arrives in these chunks. */
export function chunked(chunks: string[], contentType = 'text/event-stream'): Response {
  const encoder = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  return new Response(stream, { status: 200, headers: { 'content-type': contentType } });
}

export const BASE = 'http://governance.test';

/** An answer that never comes: rejects with the request's abort reason once its signal aborts (as fetch does). */
export function never(request: SeenRequest): Promise<Response> {
  return new Promise((_resolve, reject) => {
    const onAbort = () => reject(request.signal.reason ?? new DOMException('Aborted', 'AbortError'));
    if (request.signal.aborted) onAbort();
    else request.signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Rejects with `timed out: <what>` unless `promise` settles within `ms` (a spec that would hang fails instead). */
export function within<T>(promise: Promise<T>, ms: number, what = 'the call'): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
