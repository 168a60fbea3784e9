import type { DomainEventRow } from '#platform';

export type StreamCloseReason = 'shutdown' | 'slow' | 'revoked';

/** How a client is connected (a label of the stream metrics). */
export type StreamTransport = 'sse' | 'websocket';

/** Where a subscription's events go: an SSE response or a WebSocket. */
export interface StreamSink {
  readonly transport: StreamTransport;
  /**
   * Writes events, in order (an SSE response in one write); false when the client is too slow (its buffer is over
   * the limit): it is then dropped.
   */
  write(events: readonly DomainEventRow[]): boolean;
  /** A keep-alive (an SSE comment, a WebSocket ping). */
  heartbeat(): void;
  /**
   * Ends the connection (shutdown, a slow client, or access revoked: the organization was deleted, or the user's
   * session, membership or role ended or changed).
   */
  close(reason: StreamCloseReason): void;
}

/** Events held while the replay runs, at most; a client that falls further behind is dropped. */
export const REPLAY_HOLD_MAX = 1000;
/** Ids remembered per connection to send no event twice (replay and live overlap). */
const SENT_IDS_MAX = 2048;

/** What a subscription counts (the hub's metrics of its transport). */
export interface StreamCounters {
  /** Events written to the client. */
  sent: { inc(count: number): void };
  /** The client dropped for not keeping up. */
  slowDropped: { inc(): void };
}

/**
 * One client's view of its organization's events. Live events that arrive while the replay is read are held, then
 * sent after it; an event is sent at most once per connection.
 */
export class StreamSubscription {
  private replaying = true;
  private held: DomainEventRow[] = [];
  private readonly sent = new Set<string>();
  closed = false;

  constructor(
    readonly organizationId: string,
    /** The user whose stream token opened it: their access ending closes it. */
    readonly userId: string,
    private readonly sink: StreamSink,
    private readonly onClose: (subscription: StreamSubscription) => void,
    private readonly counters?: StreamCounters,
  ) {}

  get transport(): StreamTransport {
    return this.sink.transport;
  }

  /** Live events of the organization. */
  deliver(events: readonly DomainEventRow[]): void {
    if (this.closed) return;
    if (this.replaying) {
      this.held.push(...events);
      if (this.held.length > REPLAY_HOLD_MAX) this.drop('slow');
      return;
    }
    this.send(events);
  }

  /** Sends the replay, then what arrived meanwhile, and goes live. */
  finishReplay(replay: readonly DomainEventRow[]): void {
    const pending = [...replay, ...this.held];
    this.held = [];
    if (!this.send(pending)) return;
    this.replaying = false;
  }

  heartbeat(): void {
    if (!this.closed) this.sink.heartbeat();
  }

  /** Ends the connection from the server's side. */
  drop(reason: StreamCloseReason): void {
    if (this.closed) return;
    if (reason === 'slow') this.counters?.slowDropped.inc();
    this.sink.close(reason);
    this.ended();
  }

  /** The connection ended (either side). */
  ended(): void {
    if (this.closed) return;
    this.closed = true;
    this.held = [];
    this.onClose(this);
  }

  private send(events: readonly DomainEventRow[]): boolean {
    if (this.closed) return false;
    // Each event once, also when the replay and what arrived meanwhile overlap.
    const fresh: DomainEventRow[] = [];
    for (const event of events) {
      if (this.sent.has(event.id)) continue;
      this.sent.add(event.id);
      if (this.sent.size > SENT_IDS_MAX) this.sent.delete(this.sent.values().next().value!);
      fresh.push(event);
    }
    if (fresh.length === 0) return true;
    const keepingUp = this.sink.write(fresh);
    this.counters?.sent.inc(fresh.length);
    if (keepingUp) return true;
    this.drop('slow');
    return false;
  }
}
