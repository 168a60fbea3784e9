import { EventSource } from 'eventsource';

export const STREAM = '/api/v1/events/stream';

/** The event types a stream may send. */
const EVENT_TYPES = ['trace.approved', 'trace.flagged', 'trace.blocked', 'review.completed', 'webhook.test'];

/** An event as a client of the stream received it: its id, its type and its envelope. */
export interface ReceivedEvent {
  id: string;
  type: string;
  body: { type: string; timestamp: string; data: Record<string, unknown> };
}

/**
 * A real EventSource on `${base}/api/v1/events/stream?${query}`, collecting every event it receives, in order,
 * with extra request headers (a `Last-Event-ID` of the test's own on the first request) and the replica that served
 * it (`X-Served-By`, through the cluster's proxy).
 */
export function openEventStream(
  base: string,
  query: string,
  { headers = {}, openTimeoutMs = 5000 }: { headers?: Record<string, string>; openTimeoutMs?: number } = {},
) {
  const received: ReceivedEvent[] = [];
  const errors: unknown[] = [];
  let servedBy: string | null = null;
  const source = new EventSource(`${base}${STREAM}?${query}`, {
    fetch: async (input, init) => {
      const res = await fetch(input, { ...init, headers: { ...init?.headers, ...headers } });
      servedBy = res.headers.get('x-served-by');
      return res;
    },
  });
  for (const type of EVENT_TYPES) {
    source.addEventListener(type, (e) =>
      received.push({ id: e.lastEventId, type: e.type, body: JSON.parse(e.data) as ReceivedEvent['body'] }),
    );
  }
  source.onerror = (err) => errors.push(err);
  const opened = new Promise<void>((resolve, reject) => {
    source.onopen = () => resolve();
    setTimeout(() => reject(new Error('stream did not open')), openTimeoutMs);
  });
  return { source, received, errors, opened, servedBy: () => servedBy };
}

/** Waits until `check` holds, polling every 20 ms; fails naming `what` after `timeoutMs`. */
export async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
