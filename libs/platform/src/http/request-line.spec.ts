import { describe, expect, it } from 'vitest';
import { requestLineIn } from './request-line.js';

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
