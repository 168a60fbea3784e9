import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RequestLines, requestLineIn } from './request-line.js';

/** What RequestLines uses of a socket: its 'data' listeners and whether it can still answer. */
const fakeSocket = () =>
  Object.assign(new EventEmitter(), { destroyed: false, writable: true }) as unknown as Socket;
const bytes = (text: string) => Buffer.from(text, 'latin1');

describe('RequestLines', () => {
  it('measures a request line from one read alone when the connection was not tracked', () => {
    expect(requestLineIn(bytes(`GET /x?q=${'a'.repeat(100)} HTTP/1.1\r\nHost: x\r\n`))).toEqual({
      length: 'GET /x?q= HTTP/1.1'.length + 100,
      head: `GET /x?q=${'a'.repeat(64 - 9)}`,
    });
    expect(requestLineIn(bytes('\r\n\r\nGET / HTTP/1.1\r\n'))).toEqual({
      length: 14,
      head: 'GET / HTTP/1.1',
    });
    expect(requestLineIn(bytes('GET /unfinished'))).toEqual({ length: 15, head: 'GET /unfinished' });
  });

  it('adds the reads before the refused one while the request line is open, the method split included', () => {
    const lines = new RequestLines();
    const socket = fakeSocket();
    lines.track(socket);
    socket.emit('data', bytes('GE'));
    socket.emit('data', bytes(`T /scim/v2/Users?filter=${'a'.repeat(5000)}`));
    const line = lines.measure(socket, bytes(`${'a'.repeat(5000)} HTTP/1.1\r\nHost: x\r\n`));
    expect(line.length).toBe('GET /scim/v2/Users?filter= HTTP/1.1'.length + 10_000);
    expect(line.head.startsWith('GET /scim/v2/Users?filter=aaa')).toBe(true);
    expect(line.head).toHaveLength(64);
  });

  it('keeps a request line that ended in an earlier read: a later overflow is in the headers', () => {
    const lines = new RequestLines();
    const socket = fakeSocket();
    lines.track(socket);
    socket.emit('data', bytes('GET /health HTTP/1.1\r\nX-Padding: ppp'));
    expect(socket.listenerCount('data')).toBe(0);
    expect(lines.measure(socket, bytes('p'.repeat(20_000)))).toEqual({
      length: 'GET /health HTTP/1.1'.length,
      head: 'GET /health HTTP/1.1',
    });
  });

  it('measures the next request line once the request is answered', () => {
    const lines = new RequestLines();
    const socket = fakeSocket();
    lines.track(socket);
    socket.emit('data', bytes('GET /health HTTP/1.1\r\n\r\n'));
    lines.rearm(socket);
    lines.rearm(socket);
    expect(socket.listenerCount('data')).toBe(1);
    socket.emit('data', bytes(`GET /x?q=${'a'.repeat(9000)}`));
    expect(lines.measure(socket, bytes('a'.repeat(9000))).length).toBe('GET /x?q='.length + 18_000);
  });
});
