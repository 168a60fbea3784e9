import type { DomainEventRow } from '#platform';

/**
 * The payload of an event on every channel: the webhook body (docs/dashboard-developers.md,
 * "Review, approval patterns, webhooks and the event stream").
 */
export function eventBody(event: DomainEventRow): {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
} {
  return { type: event.type, timestamp: event.createdAt.toISOString(), data: event.data };
}

/** One SSE frame: `id`, `event` and `data` lines (the JSON has no newline). */
export function sseFrame(event: DomainEventRow): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(eventBody(event))}\n\n`;
}

/** One WebSocket text message. */
export function wsMessage(event: DomainEventRow): string {
  return JSON.stringify({ id: event.id, ...eventBody(event) });
}

/** A client whose unsent output passes this is too slow and is dropped. */
export const STREAM_BUFFER_MAX_BYTES = 256 * 1024;
