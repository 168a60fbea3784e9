import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateClientTypes, OUTPUT_FILE } from '../tools/client/generate.mjs';
import { TestContext } from './support/app.js';

describe('the typed client’s generated layer', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  it('is what the served OpenAPI document generates (packages/client/src/generated/api.ts)', async () => {
    const res = await ctx.get('/docs/openapi.json');
    expect(res.statusCode).toBe(200);
    const generated = await generateClientTypes(res.json());
    const committed = readFileSync(OUTPUT_FILE, 'utf8');
    // Not toBe: a 600 KB diff says less than the command that fixes it.
    if (generated !== committed) {
      expect.fail(
        'packages/client/src/generated/api.ts differs from the types of the served document: ' +
          'run `npm run openapi && npm run client:generate`',
      );
    }
  }, 60_000);
});
