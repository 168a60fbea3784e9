import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestContext } from './support/app.js';

/**
 * The committed openapi.json is the contract under review: it must equal what the service serves, so that a
 * contract change shows in the diff. Regenerate it with `npm run openapi`.
 */
describe('OpenAPI document', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  it('serves the document at /docs/openapi.json, equal to the committed openapi.json apart from the server URL', async () => {
    const res = await ctx.get('/docs/openapi.json');
    expect(res.statusCode).toBe(200);
    const served = res.json();
    const committed = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8'));
    expect(served.servers).toEqual([{ url: 'http://gov.test', description: 'This deployment' }]);
    expect({ ...served, servers: committed.servers }).toEqual(committed);
  });

  it('documents every operation with an operationId, a security requirement and the error envelope', async () => {
    const doc = (await ctx.get('/docs/openapi.json')).json();
    expect(doc.openapi).toMatch(/^3\.1/);
    for (const [path, item] of Object.entries<Record<string, Record<string, unknown>>>(doc.paths)) {
      expect(path.startsWith('/api/v1/')).toBe(true);
      for (const operation of Object.values(item)) {
        expect(operation.operationId).toEqual(expect.any(String));
        expect(operation.security).toBeDefined();
        const responses = operation.responses as Record<string, unknown>;
        expect(Object.keys(responses).some((s) => s.startsWith('4'))).toBe(true);
      }
    }
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await ctx.get('/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('swagger');
  });
});
