import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV_VARIABLES } from '#platform';
import { TestContext } from './support/app.js';
import { definedErrorCodes } from './support/error-codes.js';
import { listRoutes } from './support/routes.js';

interface Operation {
  responses?: Record<string, { description?: string }>;
}
interface Document {
  info: { description?: string };
  paths: Record<string, Record<string, Operation>>;
}

const root = new URL('..', import.meta.url);
const document = JSON.parse(readFileSync(new URL('openapi.json', root), 'utf8')) as Document;

/** Upper-case words, with underscores: error codes, and also acronyms (JSON) and variable names (CHROMIUM_PATH). */
const WORD = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b/g;

/** Each error response of the document (status 400 and above) with its operation, and the document's own text. */
function errorTexts(): { where: string; status: number; text: string }[] {
  const texts = [{ where: 'info.description', status: 0, text: document.info.description ?? '' }];
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (Number(status) >= 400) {
          texts.push({
            where: `${method.toUpperCase()} ${path} ${status}`,
            status: Number(status),
            text: response.description ?? '',
          });
        }
      }
    }
  }
  return texts;
}

describe('error codes in the OpenAPI document', () => {
  let union: Set<string>;
  beforeAll(async () => {
    union = await definedErrorCodes();
  });

  it('names only codes the service has (the closed union), besides variable names', () => {
    const variables = new Set(ENV_VARIABLES);
    const unknown: string[] = [];
    for (const { where, text } of errorTexts()) {
      // A `reason` (ALREADY_MEMBER) qualifies a code; it is not one.
      for (const word of text.replace(/`reason: "[A-Z_]+"`/g, '').match(WORD) ?? []) {
        // A word without an underscore is a code only when the union has it (FORBIDDEN); JSON and TOTP are not.
        if (word.includes('_') && !union.has(word) && !variables.has(word)) unknown.push(`${where}: ${word}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  it('documents every code of the union somewhere', () => {
    const named = new Set(errorTexts().flatMap(({ text }) => text.match(WORD) ?? []));
    expect([...union].filter((code) => !named.has(code)).sort()).toEqual([]);
  });
});

describe('429 responses name the limiter’s own code', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  it('RATE_LIMITED on routes with a per-user limiter, RATE_LIMIT_EXCEEDED on the others', () => {
    const wrong: string[] = [];
    let limited = 0;
    for (const route of listRoutes(ctx.app)) {
      const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
      const operation = document.paths[path]?.[route.method.toLowerCase()];
      if (!operation) continue;
      const tooMany = operation.responses?.['429']?.description;
      const where = `${route.method} ${route.path}`;
      if (route.access?.rateLimit) {
        limited++;
        if (!tooMany?.startsWith('RATE_LIMITED')) wrong.push(`${where}: ${tooMany ?? 'no 429 documented'}`);
      } else if (tooMany?.startsWith('RATE_LIMITED') && !route.guards.includes('ScimAuthGuard')) {
        // Only the per-user limiters and the SCIM token's answer RATE_LIMITED; the login limiter does not.
        if (!/RATE_LIMIT_EXCEEDED/.test(tooMany)) wrong.push(`${where}: ${tooMany}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(limited).toBeGreaterThanOrEqual(7);
  });
});
