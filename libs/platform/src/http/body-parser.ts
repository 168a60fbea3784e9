import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyBodyParser, FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, ErrorCode } from './app-error.js';
import { decodeContentEncoding } from './content-encoding.js';
import { scanJsonShape, type ShapeRefusal } from './json-shape-scan.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Content-Type as the client sent it, on routes that read the raw body (see RawBodyRoute). */
    rawContentType?: string;
  }
}

/** Largest raw body any route may declare; each route checks its own limit below this. */
export const MAX_RAW_BODY_BYTES = 8 * 1024 * 1024;
const RAW_MEDIA_TYPE = 'application/x-svc-raw-body';

interface RawBodyConfig {
  rawBody?: { maxBytes: number };
}

/**
 * The route reads its body as bytes, whatever the content type (OTLP protobuf and gzip, later the SAML form
 * post), up to `maxBytes`. The client's Content-Type is kept in `request.rawContentType`; every other route
 * stays JSON-only.
 */
export function RawBodyRoute(maxBytes: number): MethodDecorator {
  return RouteConfig({
    rawBody: { maxBytes: Math.min(maxBytes, MAX_RAW_BODY_BYTES) },
  } satisfies RawBodyConfig);
}

const rawBodyLimit = (request: FastifyRequest): number | undefined =>
  (request.routeOptions.config as RawBodyConfig | undefined)?.rawBody?.maxBytes;

/** Deeper JSON is refused: no legitimate body nests this far, and unbounded depth overflows the validators' stack. */
export const MAX_JSON_DEPTH = 64;

/**
 * Bounds on the shape of a parsed body, checked before validation so that the work a request causes stays
 * proportional to what a legitimate client sends: validators, transformers and error reports all do work per key.
 */
export interface JsonShapeLimits {
  /** Keys of one object at most. */
  maxObjectKeys: number;
  /** Object keys plus array items of the whole value at most. */
  maxTotalKeys: number;
}

export const DEFAULT_JSON_SHAPE_LIMITS: JsonShapeLimits = { maxObjectKeys: 1000, maxTotalKeys: 10_000 };

/** The refusal for a shape past the limits, as assertSafeJson and scanJsonShape say it. */
function shapeRule(kind: Exclude<ShapeRefusal, undefined>, limits: JsonShapeLimits): string {
  switch (kind) {
    case 'depth':
      return `is nested deeper than ${MAX_JSON_DEPTH} levels`;
    case 'objectKeys':
      return `must not have more than ${limits.maxObjectKeys} keys in one object`;
    case 'totalKeys':
      return `must not have more than ${limits.maxTotalKeys} keys and array items in all`;
  }
}

/** Text PostgreSQL can store: no NUL (U+0000), and well-formed UTF-16 (an unpaired surrogate has no UTF-8 form). */
const storable = (text: string) => !text.includes('\u0000') && text.isWellFormed();

const UNSTORABLE = 'must not contain NUL (U+0000) characters or unpaired surrogates';
const NOT_FINITE = 'must be a finite number (this one overflows a double)';

/** The first violation found by the walk; `path` is the field it concerns (empty for the whole value). */
class JsonViolation {
  constructor(
    readonly rule: string,
    readonly path: readonly (string | number)[],
  ) {}
}

/** A recursive walk (depth is bounded by MAX_JSON_DEPTH): no allocation per node, the path kept on one stack. */
class JsonWalk {
  private total = 0;
  private readonly path: (string | number)[] = [];

  constructor(private readonly limits: JsonShapeLimits) {}

  private fail(rule: string, extra?: string | number): never {
    throw new JsonViolation(rule, extra === undefined ? [...this.path] : [...this.path, extra]);
  }

  visit(value: unknown, depth: number): void {
    if (typeof value === 'string') {
      if (!storable(value)) this.fail(UNSTORABLE);
      return;
    }
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) this.fail(NOT_FINITE);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    if (depth >= MAX_JSON_DEPTH) throw new JsonViolation(shapeRule('depth', this.limits), []);
    if (Array.isArray(value)) {
      this.count(value.length);
      for (let i = 0; i < value.length; i += 1) {
        this.path.push(i);
        this.visit(value[i], depth + 1);
        this.path.pop();
      }
      return;
    }
    const keys = Object.keys(value);
    if (keys.length > this.limits.maxObjectKeys) this.fail(shapeRule('objectKeys', this.limits));
    this.count(keys.length);
    for (const key of keys) {
      // An unstorable key is named by its parent's path: echoing it back would not help.
      if (!storable(key)) this.fail(UNSTORABLE);
      this.path.push(key);
      this.visit((value as Record<string, unknown>)[key], depth + 1);
      this.path.pop();
    }
  }

  private count(n: number): void {
    this.total += n;
    if (this.total > this.limits.maxTotalKeys) {
      throw new JsonViolation(shapeRule('totalKeys', this.limits), []);
    }
  }
}

/**
 * Checks a parsed value before anything else reads it: nesting beyond MAX_JSON_DEPTH, more keys than the shape
 * limits allow, NUL characters or unpaired surrogates (`"\ud800"`) in strings or keys (PostgreSQL text and jsonb
 * cannot store them), and numbers that overflowed to Infinity (`1e309`, which JSON would store as null). Each is a
 * 400 naming the field, rather than seconds of validation work, a database error or silently changed data.
 */
export function assertSafeJson(
  root: unknown,
  where = 'Request body',
  limits: JsonShapeLimits = DEFAULT_JSON_SHAPE_LIMITS,
): void {
  try {
    new JsonWalk(limits).visit(root, 0);
  } catch (err) {
    if (!(err instanceof JsonViolation)) throw err;
    const field = err.path.join('.');
    throw AppError.validation(
      field ? `${where}: ${field} ${err.rule}` : `${where} ${err.rule}`,
      field ? [{ field, message: `${field} ${err.rule}` }] : undefined,
    );
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The `charset` parameter of a Content-Type, lower-cased, or undefined when there is none. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '');
  return match ? match[1]!.toLowerCase() : undefined;
}

/** What registerBodyParsers needs from the configuration. */
export interface BodyParserOptions {
  shape: JsonShapeLimits;
  /** Decoded bytes per encoded byte at most for `Content-Encoding: gzip`, `deflate` or `br` bodies. */
  maxInflateRatio: number;
}

/**
 * JSON is the only body format the API reads, except on routes marked RawBodyRoute (OTLP protobuf, later the
 * SAML form post), which get the bytes: other content types get 415. A JSON body must be UTF-8 (another
 * charset is 415, invalid bytes 400), may be compressed (see decodeContentEncoding), and must be an object.
 * Fastify's parser keeps its prototype-poisoning protection; assertSafeJson adds the depth, shape and
 * storability limits. Query strings and path parameters get the same check before validation.
 */
export function registerBodyParsers(instance: FastifyInstance, options: BodyParserOptions): void {
  const defaultJson = instance.getDefaultJsonParser('error', 'error');
  instance.removeAllContentTypeParsers();
  const parseJson: FastifyBodyParser<Buffer> = (request, bytes, done) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(
        new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'JSON bodies must be UTF-8 (charset=utf-8)'),
        undefined,
      );
      return;
    }
    let body: string;
    try {
      body = utf8.decode(bytes);
    } catch {
      done(AppError.validation('Request body is not valid UTF-8'), undefined);
      return;
    }
    if (body.trim() === '') {
      done(AppError.validation('Request body is empty but Content-Type is JSON'), undefined);
      return;
    }
    // Before parsing: a parse builds every value, and a 1 MiB body can hold a million of them.
    const refusal = scanJsonShape(body, options.shape, MAX_JSON_DEPTH);
    if (refusal) {
      done(AppError.validation(`Request body ${shapeRule(refusal, options.shape)}`), undefined);
      return;
    }
    defaultJson(request, body, (err, value) => {
      if (err) {
        done(AppError.validation('Malformed JSON in request body'), undefined);
        return;
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        done(AppError.validation('Request body must be a JSON object'), undefined);
        return;
      }
      try {
        assertSafeJson(value, 'Request body', options.shape);
        done(null, value);
      } catch (check) {
        done(check as Error, undefined);
      }
    });
  };
  instance.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJson);
  instance.addContentTypeParser(/^application\/[\w.-]+\+json$/, { parseAs: 'buffer' }, parseJson);
  // Raw-body routes: the body goes to a buffer parser that no other route reaches (their clients get 415).
  // Every other route reads `Content-Encoding` here.
  instance.addHook('preParsing', async (request, reply, payload) => {
    if (rawBodyLimit(request) === undefined) {
      // A request without a body (a GET, an empty POST) has nothing to decode, whatever it says its encoding is.
      const { 'content-length': length, 'transfer-encoding': chunked } = request.headers;
      if (chunked === undefined && (length === undefined || length === '0')) return payload;
      const decoded = decodeContentEncoding(
        request.headers['content-encoding'],
        payload,
        options.maxInflateRatio,
      );
      // No parser reads the body of some requests (a GET, a 415): once answered, the decoder is dropped and the
      // connection drains the rest of the body, to serve its next request after a success, or before it closes
      // after an error (bounded: see LingeringClose).
      if (decoded !== payload) reply.raw.once('finish', () => decoded.destroy());
      return decoded;
    }
    const contentType = request.headers['content-type'];
    request.rawContentType = contentType ?? '';
    if (contentType !== undefined) request.headers['content-type'] = RAW_MEDIA_TYPE;
    return payload;
  });
  instance.addContentTypeParser(
    RAW_MEDIA_TYPE,
    { parseAs: 'buffer', bodyLimit: MAX_RAW_BODY_BYTES },
    (request, body, done) => {
      const limit = rawBodyLimit(request);
      if (limit === undefined) {
        done(new AppError(415, ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Unsupported Content-Type'), undefined);
      } else if (body.length > limit) {
        done(new AppError(413, ErrorCode.PAYLOAD_TOO_LARGE, 'Request body is too large'), undefined);
      } else {
        done(null, body);
      }
    },
  );
  instance.addHook('preValidation', async (request) => {
    assertSafeJson(request.query, 'Query string', options.shape);
    assertSafeJson(request.params, 'Path');
  });
}
