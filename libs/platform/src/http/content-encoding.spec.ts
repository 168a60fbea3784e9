import { Readable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { AppError } from './app-error.js';
import { decodeContentEncoding } from './content-encoding.js';

async function read(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const json = Buffer.from(JSON.stringify({ hello: 'world', list: [1, 2, 3] }));

describe('decodeContentEncoding', () => {
  it('leaves a body without an encoding, or with identity, as it is', () => {
    const payload = Readable.from([json]);
    expect(decodeContentEncoding(undefined, payload, 100)).toBe(payload);
    expect(decodeContentEncoding(' Identity ', payload, 100)).toBe(payload);
  });

  it.each([
    ['gzip', gzipSync],
    ['x-gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('decodes %s and reports the encoded length it received', async (encoding, compress) => {
    const encoded = compress(json);
    const stream = decodeContentEncoding(encoding.toUpperCase(), Readable.from([encoded]), 100);
    expect((await read(stream)).equals(json)).toBe(true);
    expect((stream as Readable & { receivedEncodedLength: number }).receivedEncodedLength).toBe(
      encoded.length,
    );
  });

  it('refuses an unknown or stacked encoding with 415 before reading the body', () => {
    for (const encoding of ['compress', 'zstd', 'gzip, gzip']) {
      expect(() => decodeContentEncoding(encoding, Readable.from([json]), 100)).toThrow(
        expect.objectContaining({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' }),
      );
    }
  });

  it('fails a corrupt stream with 400', async () => {
    const stream = decodeContentEncoding('gzip', Readable.from([json]), 100);
    const err = await read(stream).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
  });

  it('keeps an error raised after its reader stopped listening from ending the process', async () => {
    const stream = decodeContentEncoding(
      'gzip',
      Readable.from([gzipSync(Buffer.alloc(4 * 1024 * 1024))]),
      100,
    );
    stream.resume(); // read without an error listener, as Fastify does once it has answered
    await new Promise((resolve) => stream.on('close', resolve));
    expect(stream.destroyed).toBe(true);
  });

  it('stops with 413 once the decoded size passes the ratio, and accepts a body within it', async () => {
    const zeros = gzipSync(Buffer.alloc(4 * 1024 * 1024)); // about 1000:1
    const err = await read(decodeContentEncoding('gzip', Readable.from([zeros]), 100)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    const decoded = await read(decodeContentEncoding('gzip', Readable.from([zeros]), 2000));
    expect(decoded.length).toBe(4 * 1024 * 1024);
  });
});
