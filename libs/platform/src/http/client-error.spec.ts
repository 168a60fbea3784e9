import { describe, expect, it } from 'vitest';
import { classifyClientError } from './client-error.js';

const overflow = (packet: string) =>
  Object.assign(new Error('Header overflow'), {
    code: 'HPE_HEADER_OVERFLOW',
    rawPacket: Buffer.from(packet),
  });

describe('classifyClientError', () => {
  it('tells an oversized request line (414) from oversized headers (431)', () => {
    expect(
      classifyClientError(overflow(`GET /api/v1/traces?q=${'a'.repeat(20_000)} HTTP/1.1\r\n`))?.[0],
    ).toBe(414);
    expect(classifyClientError(overflow(`GET /api/v1/traces?q=${'a'.repeat(20_000)}`))?.slice(0, 2)).toEqual([
      414,
      'URI_TOO_LONG',
    ]);
    expect(
      classifyClientError(overflow(`GET /health HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n`))?.slice(0, 2),
    ).toEqual([431, 'HEADERS_TOO_LARGE']);
    expect(classifyClientError(overflow('a'.repeat(20_000)))?.[0]).toBe(431);
  });

  it('judges an overflow by the whole request line when it arrived in several reads', () => {
    const tail = overflow('a'.repeat(16_000));
    // The request line so far, measured across reads: its method and path came in an earlier read.
    expect(classifyClientError(tail, { length: 20_000, head: 'GET /api/v1/traces?q=aaaa' })?.[0]).toBe(414);
    // The request line ended in an earlier read: the reads that overflowed were headers.
    expect(classifyClientError(tail, { length: 20, head: 'GET /api/v1/health HTTP/1.1' })?.[0]).toBe(431);
  });

  it('answers a request timeout with 408, other parser errors with 400, and a reset not at all', () => {
    expect(
      classifyClientError(Object.assign(new Error(), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }))?.slice(0, 2),
    ).toEqual([408, 'REQUEST_TIMEOUT']);
    expect(classifyClientError(Object.assign(new Error(), { code: 'HPE_INVALID_METHOD' }))?.[0]).toBe(400);
    expect(classifyClientError(Object.assign(new Error(), { code: 'ECONNRESET' }))).toBeUndefined();
  });
});
