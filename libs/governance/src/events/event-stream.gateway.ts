import { type OnApplicationBootstrap, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { API_PREFIX, AppError, renderError } from '#platform';
import { STREAM_BUFFER_MAX_BYTES, wsMessage } from './event-frames.js';
import { EventStreamErrorCode } from './events.errors.js';
import { EventStreamHub } from './event-stream.hub.js';
import type { StreamSubscription } from './stream-subscription.js';

/** The WebSocket route (docs/dashboard-developers.md, "Review, approval patterns, webhooks and the event stream"). */
export const EVENTS_WS_PATH = `/${API_PREFIX}/events/ws`;

/** Close codes: a bad token (sent after the upgrade: browsers cannot read a refused upgrade's status). */
export const WS_CLOSE_UNAUTHORIZED = 4401;
const WS_CLOSE_GOING_AWAY = 1001;
const WS_CLOSE_TRY_AGAIN_LATER = 1013;

/**
 * `GET /events/ws?token=`: the event stream over a WebSocket, for dashboards that prefer it. The same events as
 * JSON text messages `{id, type, timestamp, data}`, the same replay with `lastEventId`, ping frames every 15 s, and
 * close code 4401 for a bad token. Served by `@fastify/websocket` on the HTTP server, so it passes the same request
 * hooks as every other route; a plain GET (no upgrade) answers 426.
 */
@Injectable()
export class EventStreamGateway implements OnApplicationBootstrap {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly hub: EventStreamHub,
  ) {}

  /**
   * Registered once the application has set up its routes and its error and not-found handlers (Nest does that
   * after module initialisation), as an encapsulated plugin loaded when the server starts, so that it changes
   * nothing of theirs.
   */
  onApplicationBootstrap(): void {
    const adapter = this.adapterHost.httpAdapter;
    // The worker has no HTTP server.
    if (!adapter) return;
    const instance = adapter.getInstance<FastifyInstance>();
    void instance.register(async (scope) => {
      await scope.register(websocket, { options: { maxPayload: 4096 } });
      scope.route({
        method: 'GET',
        url: EVENTS_WS_PATH,
        handler: (request, reply) => this.notUpgraded(request, reply),
        wsHandler: (socket, request) => void this.connect(socket, request),
      });
    });
  }

  private notUpgraded(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const rendered = renderError(
      new AppError(
        426,
        EventStreamErrorCode.UPGRADE_REQUIRED,
        'This route is a WebSocket: connect with an Upgrade request',
      ),
      request.id,
    );
    return reply
      .status(rendered.status)
      .header('Upgrade', 'websocket')
      .type('application/json; charset=utf-8')
      .send(rendered.body);
  }

  private async connect(socket: WebSocket, request: FastifyRequest): Promise<void> {
    const query = request.query as Record<string, unknown>;
    let subscription: StreamSubscription | null = null;
    let gone = false;
    socket.on('close', () => {
      gone = true;
      subscription?.ended();
    });
    socket.on('error', () => socket.terminate());
    // Clients send nothing; anything they send is ignored.
    socket.on('message', () => undefined);
    let principal;
    try {
      principal = await this.hub.authenticate(query.token);
      this.hub.assertCapacity();
    } catch (err) {
      const unauthorized = err instanceof AppError && err.status === 401;
      socket.close(
        unauthorized ? WS_CLOSE_UNAUTHORIZED : WS_CLOSE_TRY_AGAIN_LATER,
        unauthorized ? 'Unauthorized' : 'Try again later',
      );
      return;
    }
    if (gone) return;
    const lastEventId = typeof query.lastEventId === 'string' ? query.lastEventId.slice(0, 64) : undefined;
    subscription = await this.hub.subscribe(
      principal,
      {
        transport: 'websocket',
        write: (events) => {
          for (const event of events) socket.send(wsMessage(event));
          return socket.bufferedAmount <= STREAM_BUFFER_MAX_BYTES;
        },
        heartbeat: () => socket.ping(),
        close: (reason) =>
          reason === 'revoked'
            ? socket.close(WS_CLOSE_UNAUTHORIZED, 'Access revoked')
            : reason === 'shutdown'
              ? socket.close(WS_CLOSE_GOING_AWAY, 'Server restarting: reconnect with lastEventId')
              : socket.close(WS_CLOSE_TRY_AGAIN_LATER, 'Too slow: reconnect with lastEventId'),
      },
      lastEventId,
    );
    if (gone) subscription.ended();
  }
}
