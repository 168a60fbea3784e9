import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import { AppError, ErrorCode } from './app-error.js';

const DECODERS: Record<string, () => Gunzip | Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** Below this many decoded bytes the ratio is not checked: small, repetitive JSON compresses very well. */
const RATIO_FLOOR_BYTES = 64 * 1024;

/**
 * A body sent with `Content-Encoding: gzip`, `deflate` or `br` is decoded as it arrives; the body limit then
 * applies to the decoded bytes (Fastify counts what this stream emits), and decoding stops with 413 once the
 * decoded size passes `maxRatio` times the bytes received. `identity` or no header leaves the body alone; any
 * other encoding, or several, is 415 before a byte is read. A corrupt stream is 400.
 */
export function decodeContentEncoding(
  header: string | undefined,
  payload: Readable,
  maxRatio: number,
): Readable {
  const encoding = header?.trim().toLowerCase();
  if (encoding === undefined || encoding === '' || encoding === 'identity') return payload;
  const decoder = DECODERS[encoding];
  if (!decoder) {
    throw new AppError(
      415,
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      'Unsupported Content-Encoding; send identity, gzip, deflate or br',
    );
  }
  let encoded = 0;
  let decoded = 0;
  payload.on('data', (chunk: Buffer) => (encoded += chunk.length));
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      decoded += chunk.length;
      if (decoded > RATIO_FLOOR_BYTES && decoded > maxRatio * encoded) {
        done(
          new AppError(
            413,
            ErrorCode.PAYLOAD_TOO_LARGE,
            `Request body decompresses to more than ${maxRatio} times its encoded size`,
          ),
        );
        return;
      }
      done(null, chunk);
    },
  });
  const inflater = decoder();
  // Errors end the guard, which Fastify reads: a corrupt stream is the client's fault, an aborted one too.
  inflater.on('error', () =>
    guard.destroy(AppError.validation(`Request body is not valid ${encoding} data`)),
  );
  payload.on('error', (err) => guard.destroy(err));
  // Fastify stops listening once it has answered (a body over the limit, for one): an error after that must not
  // go unheard, which would end the process.
  guard.on('error', () => undefined);
  guard.on('close', () => {
    payload.unpipe(inflater);
    inflater.destroy();
    // Whatever of the body was not read is discarded, so the request ends and keep-alive goes on.
    payload.resume();
  });
  payload.pipe(inflater).pipe(guard);
  // Fastify compares Content-Length with the bytes received on the wire, not with the decoded ones.
  Object.defineProperty(guard, 'receivedEncodedLength', { get: () => encoded });
  return guard;
}
