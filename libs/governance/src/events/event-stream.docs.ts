import type { ApiResponseOptions } from '@nestjs/swagger';

/** The OpenAPI text of the event stream's route (event-stream.controller.ts), kept out of the controller. */

export const EVENT_STREAM_DOCS = {
  stream:
    'Authenticated by `token`, a stream token from `POST /auth/stream-token` (single use, valid 60 s; a JWT or a ' +
    'used token gets 401). Streams the caller’s organization’s events, any role, as `text/event-stream`: each ' +
    'event is `id: <eventId>`, `event: <type>` and `data: {type, timestamp, data}` (the webhook body; the types ' +
    'are the webhook event names), with a `: heartbeat` comment every 15 s. After a reconnect with ' +
    '`Last-Event-ID` (header) or `lastEventId` (query), the events after that id from the last 24 hours (at ' +
    'most 1,000) come first, then live ones; no event is sent twice on a connection. Replicas share events ' +
    'through PostgreSQL LISTEN/NOTIFY. A client that does not keep up (256 KiB unread) is disconnected and ' +
    'should reconnect with its last id. The same stream is offered over a WebSocket at `GET /events/ws`.',
} as const;

/** The stream's answer: server-sent events, outside the envelope. */
export const EVENT_STREAM_RESPONSES: readonly ApiResponseOptions[] = [
  {
    status: 200,
    description: 'The event stream',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  },
];
