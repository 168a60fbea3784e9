import { describe, expect, it } from 'vitest';
import type { DomainEventRow } from '#platform';
import { REPLAY_HOLD_MAX, type StreamSink, StreamSubscription } from './stream-subscription.js';

const event = (n: number): DomainEventRow => ({
  id: n.toString(16).padStart(24, '0'),
  organizationId: 'a'.repeat(24),
  type: 'trace.flagged',
  agentId: null,
  data: { n },
  createdAt: new Date(1_800_000_000_000 + n),
});

/** A sink that accepts `room` events, then reports its client too slow. */
function sink(room = Infinity) {
  const written: string[] = [];
  const closed: string[] = [];
  const s: StreamSink = {
    transport: 'sse',
    write: (events) => {
      written.push(...events.map((e) => e.id));
      return written.length <= room;
    },
    heartbeat: () => undefined,
    close: (reason) => closed.push(reason),
  };
  return { s, written, closed };
}

describe('StreamSubscription', () => {
  it('sends the replay, then what arrived meanwhile, each event once', () => {
    const out = sink();
    const ended: StreamSubscription[] = [];
    const sub = new StreamSubscription('a'.repeat(24), 'b'.repeat(24), out.s, (x) => ended.push(x));
    sub.deliver([event(3), event(4)]);
    expect(out.written).toEqual([]);
    sub.finishReplay([event(1), event(2), event(3), event(3)]);
    sub.deliver([event(4), event(5)]);
    expect(out.written).toEqual([event(1), event(2), event(3), event(4), event(5)].map((e) => e.id));
    expect(ended).toEqual([]);
  });

  it('drops a client whose buffer is over the limit, and sends it nothing more', () => {
    const out = sink(2);
    const ended: StreamSubscription[] = [];
    const sub = new StreamSubscription('a'.repeat(24), 'b'.repeat(24), out.s, (x) => ended.push(x));
    sub.finishReplay([]);
    sub.deliver([event(1), event(2), event(3), event(4)]);
    expect(out.written).toHaveLength(4);
    expect(out.closed).toEqual(['slow']);
    expect(ended).toEqual([sub]);
    sub.deliver([event(5)]);
    expect(out.written).toHaveLength(4);
  });

  it('drops a client that falls more than REPLAY_HOLD_MAX events behind during its replay', () => {
    const out = sink();
    const sub = new StreamSubscription('a'.repeat(24), 'b'.repeat(24), out.s, () => undefined);
    sub.deliver(Array.from({ length: REPLAY_HOLD_MAX + 1 }, (_, i) => event(i)));
    expect(out.closed).toEqual(['slow']);
    expect(sub.closed).toBe(true);
    sub.finishReplay([event(1)]);
    expect(out.written).toEqual([]);
  });

  it('counts the events written to its client and its being dropped for not keeping up', () => {
    const out = sink(3);
    const counted = { sent: 0, slow: 0 };
    const counters = {
      sent: { inc: (n: number) => (counted.sent += n) },
      slowDropped: { inc: () => counted.slow++ },
    };
    const sub = new StreamSubscription('a'.repeat(24), 'b'.repeat(24), out.s, () => undefined, counters);
    expect(sub.transport).toBe('sse');
    sub.finishReplay([event(1), event(2)]);
    sub.deliver([event(2), event(3)]);
    expect(counted).toEqual({ sent: 3, slow: 0 });
    // Written, then found over the limit: the events count as sent, and the client as dropped once.
    sub.deliver([event(4), event(5)]);
    sub.deliver([event(6)]);
    sub.drop('slow');
    expect(counted).toEqual({ sent: 5, slow: 1 });
  });
});
