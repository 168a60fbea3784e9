import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import {
  AppError,
  Clock,
  DATABASE,
  type DatabaseHandle,
  DOMAIN_EVENTS_CHANNEL,
  DomainEvents,
  type DomainEventsNotice,
  ErrorCode,
  Metrics,
  NotificationBus,
} from '#platform';
import type { Gauge } from 'prom-client';
import {
  ACCESS_REVOKED_CHANNEL,
  accessRevokedNoticeOf,
  MembersRepository,
  ORGANIZATION_DELETED_CHANNEL,
  StreamTokenService,
} from '#identity';
import {
  type StreamCounters,
  type StreamSink,
  StreamSubscription,
  type StreamTransport,
} from './stream-subscription.js';

/**
 * Keep-alives every 15 s (docs/dashboard-developers.md, "Review, approval patterns, webhooks and the event stream";
 * test/event-stream.e2e-spec.ts).
 */
export const STREAM_HEARTBEAT_MS = 15_000;
/** The replay after a reconnect: events of the last 24 hours after the client's last id, at most 1,000. */
export const REPLAY_WINDOW_MS = 24 * 3600 * 1000;
export const REPLAY_MAX = 1000;
/** Open streams per process at most (then 503). */
export const MAX_STREAMS = 5000;

export interface StreamPrincipal {
  userId: string;
  organizationId: string;
}

/** A transport's metrics, resolved once. */
type TransportMeters = StreamCounters & { connections: Gauge.Internal<'transport'> };

/**
 * The live event stream's fan-out in this process: one subscription to the notification bus, on which every
 * replica's event fan-out announces committed events; each announcement is read once (by id, scoped to its
 * organization) and handed to the organization's open connections. SSE and WebSocket connections are its sinks.
 */
@Injectable()
export class EventStreamHub implements OnModuleInit, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger('EventStream');
  private readonly byOrganization = new Map<string, Set<StreamSubscription>>();
  private readonly bus: NotificationBus;
  private unsubscribe: (() => Promise<void>) | null = null;
  private unsubscribeDeletions: (() => Promise<void>) | null = null;
  private unsubscribeRevocations: (() => Promise<void>) | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  /** A stream is about to open (`ready`): listen even before it is counted. */
  private warm = false;
  /** Changes of the subscription to the bus, one after another. */
  private listening: Promise<void> = Promise.resolve();
  private open = 0;
  /** Subscriptions opened since start (for tests and diagnostics). */
  opened = 0;
  private readonly meters: Record<StreamTransport, TransportMeters>;
  /** Per organization, the last delivery under way: notices are delivered in the order they arrive. */
  private readonly delivering = new Map<string, Promise<void>>();

  constructor(
    private readonly events: DomainEvents,
    private readonly streamTokens: StreamTokenService,
    private readonly members: MembersRepository,
    private readonly clock: Clock,
    @Inject(DATABASE) handle: DatabaseHandle,
    metrics: Metrics,
  ) {
    this.bus = NotificationBus.of(handle);
    const connections = metrics.gauge({
      name: 'governance_stream_connections',
      help: 'Open event-stream connections, by transport',
      labelNames: ['transport'],
    });
    const sent = metrics.counter({
      name: 'governance_stream_events_sent_total',
      help: 'Events written to event-stream clients, by transport',
      labelNames: ['transport'],
    });
    const slow = metrics.counter({
      name: 'governance_stream_slow_clients_disconnected_total',
      help: 'Event-stream clients dropped for not keeping up, by transport',
      labelNames: ['transport'],
    });
    const meters = (transport: StreamTransport): TransportMeters => {
      const open = connections.labels(transport);
      // Shown at 0 before the first client.
      open.set(0);
      return { connections: open, sent: sent.labels(transport), slowDropped: slow.labels(transport) };
    };
    this.meters = { sse: meters('sse'), websocket: meters('websocket') };
  }

  async onModuleInit(): Promise<void> {
    this.heartbeat = setInterval(() => this.beat(), STREAM_HEARTBEAT_MS);
    this.heartbeat.unref();
    // A deleted organization's open streams end at once, on every replica (test/organization-deletion.e2e-spec.ts).
    this.unsubscribeDeletions = await this.bus.subscribe(ORGANIZATION_DELETED_CHANNEL, {
      onMessage: (organizationId) => this.closeOrganization(organizationId),
    });
    // A user's streams end, on every replica, when their access ends or narrows: a session revoked, logout,
    // suspension, removal, SCIM deactivation, a role change. A client that may still stream reconnects.
    this.unsubscribeRevocations = await this.bus.subscribe(ACCESS_REVOKED_CHANNEL, {
      onMessage: (payload) => {
        const notice = accessRevokedNoticeOf(payload);
        if (notice) this.closeUser(notice.userId, notice.organizationId);
      },
    });
  }

  /** Ends the user's open streams in the organization, or in every organization when it is null. */
  closeUser(userId: string, organizationId: string | null): void {
    const sets = organizationId
      ? [this.byOrganization.get(organizationId) ?? new Set<StreamSubscription>()]
      : [...this.byOrganization.values()];
    for (const set of sets) for (const s of [...set]) if (s.userId === userId) s.drop('revoked');
  }

  /** Ends every open stream of the organization (it was deleted). */
  closeOrganization(organizationId: string): void {
    for (const s of [...(this.byOrganization.get(organizationId) ?? [])]) s.drop('revoked');
  }

  /** Open connections are closed before the server stops, so that it can stop. */
  beforeApplicationShutdown(): void {
    for (const set of [...this.byOrganization.values()]) for (const s of [...set]) s.drop('shutdown');
  }

  async onModuleDestroy(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    const unsubscribeDeletions = this.unsubscribeDeletions;
    const unsubscribeRevocations = this.unsubscribeRevocations;
    this.unsubscribeDeletions = null;
    this.unsubscribeRevocations = null;
    await unsubscribeDeletions?.();
    await unsubscribeRevocations?.();
    await this.listening;
    await this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /**
   * Listens to the events' notices while streams are open in this process, and only then: a replica without streams
   * is not sent every other replica's notices (PostgreSQL delivers a NOTIFY to each listening session).
   */
  private listen(): Promise<void> {
    this.listening = this.listening.then(async () => {
      const wanted = this.open > 0 || this.warm;
      if (wanted && !this.unsubscribe) {
        this.unsubscribe = await this.bus.subscribe(DOMAIN_EVENTS_CHANNEL, {
          onMessage: (payload, local) => void this.onNotice(payload, local),
        });
      } else if (!wanted && this.unsubscribe) {
        const unsubscribe = this.unsubscribe;
        this.unsubscribe = null;
        await unsubscribe();
      }
    });
    return this.listening;
  }

  /** A keep-alive on every open stream: an SSE comment, a WebSocket ping (every 15 s; tests call it at once). */
  beat(): void {
    for (const set of this.byOrganization.values()) for (const s of set) s.heartbeat();
  }

  /** Open connections (for tests and diagnostics). */
  get connections(): number {
    return this.open;
  }

  /**
   * The user and organization of a stream token (single use, 60 s), if its membership is active; 401 otherwise
   * (a JWT is not a stream token and fails the same way).
   */
  async authenticate(token: unknown): Promise<StreamPrincipal> {
    if (typeof token !== 'string' || token.length === 0 || token.length > 512) {
      throw AppError.unauthorized('A stream token is required: POST /auth/stream-token');
    }
    const principal = await this.streamTokens.consume(token);
    if (!principal) throw AppError.unauthorized('The stream token is invalid, used or expired');
    const member = await this.members.findMember(principal.organizationId, principal.userId);
    if (!member?.isActive) throw AppError.unauthorized('The stream token is invalid, used or expired');
    return principal;
  }

  /**
   * Call before answering a stream's first byte: once it resolves, this process hears every replica's events, so a
   * client that sees the stream open misses nothing committed after that.
   */
  ready(): Promise<void> {
    this.warm = true;
    return this.listen();
  }

  /** Whether another stream may open here (503 otherwise, before the response starts). */
  assertCapacity(): void {
    if (this.open >= MAX_STREAMS) {
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, 'Too many open event streams; retry shortly', {
        headers: { 'Retry-After': '5' },
      });
    }
  }

  /**
   * Opens a subscription for the organization: live events from now, after the replay of what followed
   * `lastEventId` (if given). Returns it, to end it when the client goes.
   */
  async subscribe(
    principal: StreamPrincipal,
    sink: StreamSink,
    lastEventId: string | undefined,
  ): Promise<StreamSubscription> {
    const { organizationId } = principal;
    const meters = this.meters[sink.transport];
    const subscription = new StreamSubscription(
      organizationId,
      principal.userId,
      sink,
      (s) => this.remove(s),
      meters,
    );
    let set = this.byOrganization.get(organizationId);
    if (!set) this.byOrganization.set(organizationId, (set = new Set()));
    set.add(subscription);
    this.open += 1;
    meters.connections.inc();
    try {
      // Listening before the replay is read: nothing committed meanwhile falls between the two.
      await this.listen();
      const replay =
        lastEventId && /^[0-9a-f]{24}$/.test(lastEventId)
          ? await this.events.after(
              organizationId,
              lastEventId,
              new Date(this.clock.nowMs() - REPLAY_WINDOW_MS),
              REPLAY_MAX,
            )
          : [];
      subscription.finishReplay(replay);
      this.opened += 1;
    } catch (err) {
      this.logger.warn({ err }, 'Event stream replay failed');
      subscription.drop('shutdown');
    }
    return subscription;
  }

  private remove(subscription: StreamSubscription): void {
    const set = this.byOrganization.get(subscription.organizationId);
    if (!set?.delete(subscription)) return;
    this.open -= 1;
    this.meters[subscription.transport].connections.dec();
    if (this.open === 0) {
      this.warm = false;
      void this.listen();
    }
    if (set.size === 0) this.byOrganization.delete(subscription.organizationId);
  }

  private async onNotice(payload: string, local: boolean): Promise<void> {
    let notice: DomainEventsNotice;
    try {
      notice = JSON.parse(payload) as DomainEventsNotice;
    } catch {
      return;
    }
    const { organizationId } = notice;
    const set = this.byOrganization.get(organizationId);
    if (!set || set.size === 0 || !Array.isArray(notice.ids)) return;
    // This process's own notices come twice: right after its commit, and back through LISTEN. While it listens, the
    // second is the one taken: PostgreSQL delivers notifications in commit order, so its own events then take their
    // place among the other replicas' (read from memory, without a query). Otherwise (PGlite, or the listener lost)
    // the first.
    const listening = this.bus.crossProcess && this.bus.isListening;
    if (local ? listening : notice.origin === this.events.origin && !listening) return;
    // The reads start at once; the deliveries keep the notices' order, whichever read answers first.
    const read = this.events.byIds(organizationId, notice.ids.slice(0, 1000));
    read.catch(() => undefined);
    const previous = this.delivering.get(organizationId) ?? Promise.resolve();
    const delivered = previous.then(async () => {
      try {
        const events = await read;
        for (const subscription of [...(this.byOrganization.get(organizationId) ?? [])]) subscription.deliver(events);
      } catch (err) {
        this.logger.warn({ err }, 'Event stream could not read announced events');
      }
    });
    this.delivering.set(organizationId, delivered);
    await delivered;
    if (this.delivering.get(organizationId) === delivered) this.delivering.delete(organizationId);
  }
}
