import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiErrors, Public } from '#platform';
import { StreamQueryDto } from './dto/stream.dto.js';
import { sseFrame, STREAM_BUFFER_MAX_BYTES } from './event-frames.js';
import { EventStreamHub } from './event-stream.hub.js';
import type { StreamSubscription } from './stream-subscription.js';

/** The organization's events as server-sent events. */
@ApiTags('Events')
@Controller('events')
export class EventStreamController {
  constructor(private readonly hub: EventStreamHub) {}

  @Get('stream')
  @Public()
  @ApiOperation({
    summary: 'Stream events (SSE)',
    description:
      'Authenticated by `token`, a stream token from `POST /auth/stream-token` (single use, valid 60 s; a JWT or a ' +
      'used token gets 401). Streams the caller’s organization’s events, any role, as `text/event-stream`: each ' +
      'event is `id: <eventId>`, `event: <type>` and `data: {type, timestamp, data}` (the webhook body; the types ' +
      'are the webhook event names), with a `: heartbeat` comment every 15 s. After a reconnect with ' +
      '`Last-Event-ID` (header) or `lastEventId` (query), the events after that id from the last 24 hours (at ' +
      'most 1,000) come first, then live ones; no event is sent twice on a connection. Replicas share events ' +
      'through PostgreSQL LISTEN/NOTIFY. A client that does not keep up (256 KiB unread) is disconnected and ' +
      'should reconnect with its last id. The same stream is offered over a WebSocket at `GET /events/ws`.',
  })
  @ApiProduces('text/event-stream')
  @ApiResponse({
    status: 200,
    description: 'The event stream',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiErrors([400, 401, 503])
  async stream(
    @Query() query: StreamQueryDto,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const principal = await this.hub.authenticate(query.token);
    this.hub.assertCapacity();
    const header = request.headers['last-event-id'];
    const lastEventId = (typeof header === 'string' ? header : undefined) ?? query.lastEventId;

    await this.hub.ready();
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(': connected\nretry: 3000\n\n');
    let subscription: StreamSubscription | null = null;
    let gone = false;
    res.on('close', () => {
      gone = true;
      subscription?.ended();
    });
    subscription = await this.hub.subscribe(
      principal,
      {
        write: (events) => {
          res.write(events.map(sseFrame).join(''));
          return res.writableLength <= STREAM_BUFFER_MAX_BYTES;
        },
        heartbeat: () => void res.write(': heartbeat\n\n'),
        close: () => res.end(),
      },
      lastEventId,
    );
    if (gone) subscription.ended();
  }
}
