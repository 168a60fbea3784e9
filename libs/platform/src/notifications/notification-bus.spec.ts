import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { DatabaseHandle } from '../db/database.js';
import type { TransactionHost } from '../db/transaction-host.js';
import { NotificationBus } from './notification-bus.js';

/** A stand-in for pg.Client: records its queries; `drop()` ends it as a lost connection would. */
class FakeClient extends EventEmitter {
  readonly queries: string[] = [];
  ended = false;
  constructor(private readonly failConnect: boolean) {
    super();
  }
  connect = () => (this.failConnect ? Promise.reject(new Error('refused')) : Promise.resolve());
  query = (text: string) => {
    this.queries.push(text);
    return Promise.resolve({ rows: [] });
  };
  end = () => {
    this.ended = true;
    return Promise.resolve();
  };
  drop() {
    this.emit('end');
  }
  send(channel: string, payload: string) {
    this.emit('notification', { channel, payload });
  }
}

function postgresHandle(failures = 0) {
  const clients: FakeClient[] = [];
  const newClient = vi.fn(() => {
    const client = new FakeClient(clients.length < failures);
    clients.push(client);
    return client;
  });
  const handle = { driver: 'postgres', newClient } as unknown as DatabaseHandle;
  return { handle, clients, newClient };
}

function fakeTx() {
  const committed: (() => unknown)[] = [];
  const execute = vi.fn(async () => undefined);
  const tx = { db: { execute }, afterCommit: (cb: () => unknown) => committed.push(cb) };
  return {
    tx: tx as unknown as TransactionHost,
    execute,
    commit: () => committed.splice(0).forEach((cb) => cb()),
  };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

describe('NotificationBus', () => {
  it('listens to every channel of every subscriber on one connection', async () => {
    const { handle, clients, newClient } = postgresHandle();
    const bus = NotificationBus.of(handle);
    const heard: string[] = [];
    const offA = await bus.subscribe('chan_a', { onMessage: (p) => heard.push(`a1:${p}`) });
    const offA2 = await bus.subscribe('chan_a', { onMessage: (p) => heard.push(`a2:${p}`) });
    const offB = await bus.subscribe('chan_b', { onMessage: (p) => heard.push(`b:${p}`) });
    expect(newClient).toHaveBeenCalledTimes(1);
    expect(clients[0]!.queries).toEqual(['LISTEN chan_a', 'LISTEN chan_b']);
    clients[0]!.send('chan_a', 'x');
    clients[0]!.send('chan_b', 'y');
    expect(heard).toEqual(['a1:x', 'a2:x', 'b:y']);
    await offB();
    expect(clients[0]!.queries.at(-1)).toBe('UNLISTEN chan_b');
    await offA();
    await offA2();
    expect(clients[0]!.ended).toBe(true);
    expect(NotificationBus.of(handle)).toBe(bus);
  });

  it('tells subscribers when it stops and starts hearing, and listens again after a reconnection', async () => {
    const { handle, clients } = postgresHandle();
    const bus = NotificationBus.of(handle, { reconnectMinMs: 1, reconnectMaxMs: 1 });
    const states: boolean[] = [];
    const off = await bus.subscribe('chan_a', {
      onMessage: () => undefined,
      onListening: (l) => states.push(l),
    });
    expect(states).toEqual([true]);
    clients[0]!.drop();
    expect(states).toEqual([true, false]);
    expect(bus.isListening).toBe(false);
    await until(() => bus.isListening);
    expect(states).toEqual([true, false, true]);
    expect(clients).toHaveLength(2);
    expect(clients[1]!.queries).toEqual(['LISTEN chan_a']);
    await off();
  });

  it('retries a first connection that failed, and a subscriber then hears that it listens', async () => {
    const { handle, clients } = postgresHandle(1);
    const bus = NotificationBus.of(handle, { reconnectMinMs: 1, reconnectMaxMs: 1 });
    const states: boolean[] = [];
    const off = await bus.subscribe('chan_a', {
      onMessage: () => undefined,
      onListening: (l) => states.push(l),
    });
    expect(states).toEqual([]);
    await until(() => states.length === 1);
    expect(states).toEqual([true]);
    expect(clients).toHaveLength(2);
    await off();
  });

  it('queues a NOTIFY in the transaction and delivers in this process only after commit', async () => {
    const { handle } = postgresHandle();
    const bus = NotificationBus.of(handle);
    const heard: string[] = [];
    const off = await bus.subscribe('chan_a', { onMessage: (p) => heard.push(p) });
    const { tx, execute, commit } = fakeTx();
    await bus.notify(tx, 'chan_a', 'k1');
    expect(execute).toHaveBeenCalledTimes(1);
    expect(heard).toEqual([]);
    commit();
    expect(heard).toEqual(['k1']);
    await off();
  });

  it('on PGlite opens no connection and delivers in the process after commit', async () => {
    const handle = { driver: 'pglite' } as unknown as DatabaseHandle;
    const bus = NotificationBus.of(handle);
    const heard: string[] = [];
    const off = await bus.subscribe('chan_a', { onMessage: (p) => heard.push(p) });
    const { tx, execute, commit } = fakeTx();
    await bus.notify(tx, 'chan_a', 'k');
    expect(execute).not.toHaveBeenCalled();
    commit();
    expect(heard).toEqual(['k']);
    expect(bus.connections).toBe(0);
    await off();
  });

  it('refuses a channel name that is not a plain identifier', async () => {
    const bus = NotificationBus.of({ driver: 'pglite' } as unknown as DatabaseHandle);
    await expect(bus.subscribe('x; drop table users', { onMessage: () => undefined })).rejects.toThrow(
      /Invalid notification channel/,
    );
  });
});
