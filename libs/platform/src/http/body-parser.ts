import type { FastifyBodyParser, FastifyInstance } from 'fastify';
import { AppError } from './app-error.js';

/** Deeper JSON is refused: no legitimate body nests this far, and unbounded depth overflows the validators' stack. */
export const MAX_JSON_DEPTH = 64;

/**
 * Walks a parsed value without recursion. Refuses nesting beyond MAX_JSON_DEPTH and NUL characters in strings or
 * keys (PostgreSQL text and jsonb cannot store U+0000), so such input is a 400 rather than a database error.
 */
export function assertSafeJson(root: unknown, where = 'Request body'): void {
  const stack: [unknown, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000'))
        throw AppError.validation(`${where} must not contain NUL (U+0000) characters`);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH)
      throw AppError.validation(`${where} is nested deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(value)) {
      for (const item of value) stack.push([item, depth + 1]);
    } else {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\u0000'))
          throw AppError.validation(`${where} must not contain NUL (U+0000) characters`);
        stack.push([item, depth + 1]);
      }
    }
  }
}

/**
 * JSON is the only body format the API reads (modules that need another, such as OTLP protobuf or the SAML
 * form post, register it on their own routes): other content types get 415. Fastify's parser keeps its
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
  instance.addHook('preValidation', async (request) => {
    assertSafeJson(request.query, 'Query string');
    assertSafeJson(request.params, 'Path');
  });
}
