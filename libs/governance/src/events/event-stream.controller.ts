import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Endpoint } from '#platform';
import { StreamQueryDto } from './dto/stream.dto.js';
import { sseFrame, STREAM_BUFFER_MAX_BYTES } from './event-frames.js';
import { EVENT_STREAM_DOCS as DOCS, EVENT_STREAM_RESPONSES } from './event-stream.docs.js';
import { EventStreamHub } from './event-stream.hub.js';
import type { StreamSubscription } from './stream-subscription.js';

/** Written as a stream ends on shutdown: reconnect in half a second, with `Last-Event-ID`, to another replica. */
const SHUTDOWN_HINT = 'retry: 500\n: server restarting; reconnect with Last-Event-ID\n\n';

/** The organization's events as server-sent events. */
@ApiTags('Events')
@Controller('events')
export class EventStreamController {
  constructor(private readonly hub: EventStreamHub) {}

  @Get('stream')
  @Endpoint({
    summary: 'Stream events (SSE)',
    description: DOCS.stream,
    access: 'public',
    produces: ['text/event-stream'],
    responses: EVENT_STREAM_RESPONSES,
    errors: [400, 401, 503],
  })
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
        transport: 'sse',
        write: (events) => {
          res.write(events.map(sseFrame).join(''));
          return res.writableLength <= STREAM_BUFFER_MAX_BYTES;
        },
        heartbeat: () => void res.write(': heartbeat\n\n'),
        // On shutdown, a hint before the end: reconnect soon (the balancer routes elsewhere) with the last id.
        close: (reason) => res.end(reason === 'shutdown' ? SHUTDOWN_HINT : undefined),
      },
      lastEventId,
    );
    if (gone) subscription.ended();
  }
}
