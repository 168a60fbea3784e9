import type { SchemaOr, Schemas } from './types.js';

/** The event names a webhook subscribes to (the document's enum of `events`). */
type EventName = NonNullable<Schemas['CreateWebhookDto']['events']>[number];

/** While the document does not describe each event's `data`: the event names with untyped data. */
type UntypedEvent = {
  [Type in EventName]: { type: Type; timestamp: string; data: Record<string, unknown> };
}[EventName];

/** The document's `GovernanceEvent` (one schema per event type, discriminated by `type`). */
type DocumentedEvent = SchemaOr<'GovernanceEvent', UntypedEvent>;

type WithId<Event> = Event extends unknown ? Event & { id: string } : never;

/**
 * An event, as webhooks deliver it and the stream sends it: `{type, timestamp, data}` and its `id` (the
 * `webhook-id` header, the SSE `id:` line, the WebSocket message's `id`). The same event keeps its id on every
 * retry, redelivery and replay: deduplicate on it. Narrow on `type`:
 *
 *   if (event.type === 'trace.flagged') event.data.reviewItemId
 */
export type GovernanceEvent = WithId<DocumentedEvent>;

/** Every event type (`'trace.flagged' | 'review.completed' | …`). */
export type EventType = GovernanceEvent['type'];

/** The event of one type (`EventOf<'review.completed'>`). */
export type EventOf<Type extends EventType> = Extract<GovernanceEvent, { type: Type }>;

/** The checks an event's JSON must pass before it is handed out as a `GovernanceEvent`. */
export function toGovernanceEvent(id: string, json: unknown): GovernanceEvent {
  if (
    typeof json !== 'object' ||
    json === null ||
    typeof (json as { type?: unknown }).type !== 'string' ||
    typeof (json as { timestamp?: unknown }).timestamp !== 'string'
  ) {
    throw new TypeError('Not an event: expected {type, timestamp, data}');
  }
  return { ...(json as object), id } as GovernanceEvent;
}
