import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RequestLines, requestLineIn } from './request-line.js';

const bytes = (text: string) => Buffer.from(text, 'latin1');

describe('requestLineIn', () => {
  it('measures the request line of one read', () => {
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
});

/** Node's HTTP parser as RequestLines sees it: an execute callback in a numbered slot, and the read it parsed. */
class FakeParser {
  static kOnExecute = 5;
  current = Buffer.alloc(0);
  executed: unknown[] = [];
  [slot: number]: unknown;
  constructor() {
    this[FakeParser.kOnExecute] = (ret: unknown) => this.executed.push(ret);
  }
  getCurrentBuffer(): Buffer {
    return this.current;
  }
  /** Node parsed `text` natively and calls back with the count (or the error). */
  read(text: string, ret: unknown = text.length): void {
    this.current = bytes(text);
    (this[FakeParser.kOnExecute] as (ret: unknown) => void)(ret);
  }
}
const connection = (parser: FakeParser | undefined = new FakeParser()) => ({ parser }) as unknown as Socket;

describe('RequestLines', () => {
  it('adds the reads before the refused one while the request line is open, the method split included', () => {
    const parser = new FakeParser();
    const socket = connection(parser);
    const lines = new RequestLines();
    lines.track(socket);
    parser.read('GE');
    parser.read(`T /scim/v2/Users?filter=${'a'.repeat(5000)}`);
    // Node's own callback still runs, with what it was given.
    expect(parser.executed).toEqual([2, 5000 + 'T /scim/v2/Users?filter='.length]);
    const line = lines.measure(socket, bytes(`${'a'.repeat(3000)} HTTP/1.1\r\n`));
    expect(line.length).toBe(`GET /scim/v2/Users?filter= HTTP/1.1`.length + 8000);
    expect(line.head.startsWith('GET /scim/v2/Users?filter=')).toBe(true);
  });

  it('keeps a request line that ended in an earlier read: a later overflow is in the headers', () => {
    const parser = new FakeParser();
    const socket = connection(parser);
    const lines = new RequestLines();
    lines.track(socket);
    parser.read('GET /health HTTP/1.1\r\nX-Padding: ppp');
    // The refused read is not added by the callback (its ret is the error), only by measure.
    parser.read('p'.repeat(20_000), new Error('HPE_HEADER_OVERFLOW'));
    expect(lines.measure(socket, bytes('p'.repeat(20_000)))).toEqual({
      length: 'GET /health HTTP/1.1'.length,
      head: 'GET /health HTTP/1.1',
    });
  });

  it('measures the next request line once the request is answered', () => {
    const parser = new FakeParser();
    const socket = connection(parser);
    const lines = new RequestLines();
    lines.track(socket);
    parser.read('GET /health HTTP/1.1\r\n\r\n');
    lines.rearm(socket);
    parser.read(`GET /x?q=${'a'.repeat(9000)}`);
    expect(lines.measure(socket, bytes('a'.repeat(9000))).length).toBe('GET /x?q='.length + 18_000);
  });

  it('falls back to the refused read alone where Node offers no parser callback', () => {
    const lines = new RequestLines();
    const socket = connection(undefined);
    lines.track(socket);
    expect(lines.measure(socket, bytes(`GET /x?q=${'a'.repeat(5000)} HTTP/1.1\r\n`)).length).toBe(
      `GET /x?q= HTTP/1.1`.length + 5000,
    );
    expect(lines.measure(socket, bytes('a'.repeat(5000))).head).toBe('a'.repeat(64));
  });
});
