import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyBodyParser, FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, ErrorCode } from './app-error.js';

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

/** Text PostgreSQL can store: no NUL (U+0000), and well-formed UTF-16 (an unpaired surrogate has no UTF-8 form). */
const storable = (text: string) => !text.includes('\u0000') && text.isWellFormed();

/** A node of the walk: its value, depth, key in its parent, and the parent (for the path, built only on failure). */
type Node = [value: unknown, depth: number, key: string | number | null, parent: Node | null];

/** `a.b.0.c`: the dotted path of a node, as validation details name fields. */
function pathOf(node: Node | null): string {
  const parts: string[] = [];
  for (let n = node; n && n[2] !== null; n = n[3]) parts.unshift(String(n[2]));
  return parts.join('.');
}

/**
 * Walks a parsed value without recursion. Refuses nesting beyond MAX_JSON_DEPTH, and NUL characters or unpaired
 * surrogates (`"\ud800"`) in strings or keys (PostgreSQL text and jsonb cannot store them), so such input is a 400
 * naming the field rather than a database error.
 */
export function assertSafeJson(root: unknown, where = 'Request body'): void {
  const unstorable = (node: Node) => {
    const field = pathOf(node);
    const rule = 'must not contain NUL (U+0000) characters or unpaired surrogates';
    return AppError.validation(
      `${where} ${rule}`,
      field ? [{ field, message: `${field} ${rule}` }] : undefined,
    );
  };
  const stack: Node[] = [[root, 0, null, null]];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const [value, depth] = node;
    if (typeof value === 'string') {
      if (!storable(value)) throw unstorable(node);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH)
      throw AppError.validation(`${where} is nested deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push([item, depth + 1, index, node]));
    } else {
      for (const [key, item] of Object.entries(value)) {
        // An unstorable key is named by its parent's path: echoing it back would not help.
        if (!storable(key)) throw unstorable(node);
        stack.push([item, depth + 1, key, node]);
      }
    }
  }
}

/**
 * JSON is the only body format the API reads, except on routes marked RawBodyRoute (OTLP protobuf, later the
 * SAML form post), which get the bytes: other content types get 415. Fastify's parser keeps its
 * prototype-poisoning protection; our check adds the depth and NUL limits. Query strings and path parameters
 * get the same NUL check before validation.
 */
export function registerBodyParsers(instance: FastifyInstance): void {
  const defaultJson = instance.getDefaultJsonParser('error', 'error');
  instance.removeAllContentTypeParsers();
  const parseJson: FastifyBodyParser<string> = (request, body, done) => {
    if (body.trim() === '') {
      done(AppError.validation('Request body is empty but Content-Type is JSON'), undefined);
      return;
    }
    defaultJson(request, body, (err, value) => {
      if (err) {
        done(AppError.validation('Malformed JSON in request body'), undefined);
        return;
      }
      try {
        assertSafeJson(value);
        done(null, value);
      } catch (check) {
        done(check as Error, undefined);
      }
    });
  };
  instance.addContentTypeParser('application/json', { parseAs: 'string' }, parseJson);
  instance.addContentTypeParser(/^application\/[\w.-]+\+json$/, { parseAs: 'string' }, parseJson);
  // Raw-body routes: the body goes to a buffer parser that no other route reaches (their clients get 415).
  instance.addHook('preParsing', async (request, _reply, payload) => {
    if (rawBodyLimit(request) === undefined) return payload;
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
    assertSafeJson(request.query, 'Query string');
    assertSafeJson(request.params, 'Path');
  });
}
