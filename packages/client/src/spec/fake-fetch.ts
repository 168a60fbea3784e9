/** A request as a fake service saw it: its body read as text. */
export interface SeenRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string;
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
