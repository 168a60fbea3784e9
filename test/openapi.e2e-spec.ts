import { readFileSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TestContext } from './support/app.js';

/**
 * The committed openapi.json is the contract under review: it must equal what the service serves, so that a
 * contract change shows in the diff. Regenerate it with `npm run openapi`.
 */
describe('OpenAPI document', () => {
  let ctx: TestContext;
  const warnings: string[] = [];
  beforeAll(async () => {
    // The document is built while the application boots: @nestjs/swagger warns there, once, of a duplicate DTO.
    const record = (message: unknown) => void warnings.push(String(message));
    const spies = [
      vi.spyOn(Logger, 'warn').mockImplementation(record),
      vi.spyOn(Logger.prototype, 'warn').mockImplementation(record),
    ];
    try {
      ctx = await TestContext.create({ freshDocument: true });
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });
  afterAll(async () => ctx?.close());

  it('serves the document at /docs/openapi.json, byte for byte the committed openapi.json apart from the server URL', async () => {
    const res = await ctx.get('/docs/openapi.json');
    expect(res.statusCode).toBe(200);
    const served = res.json();
    const text = readFileSync(new URL('../openapi.json', import.meta.url), 'utf8');
    const committed = JSON.parse(text);
    expect(served.servers).toEqual([{ url: 'http://gov.test', description: 'This deployment' }]);
    expect({ ...served, servers: committed.servers }).toEqual(committed);
    // The same text as `npm run openapi` writes: key order too, so that moving a decorator cannot reorder the document.
    const written = `${JSON.stringify({ ...served, servers: committed.servers }, null, 2)}\n`;
    expect(
      written === text,
      'the served document differs from openapi.json in order or spacing: npm run openapi',
    ).toBe(true);
  });

  it('documents every operation with an operationId, a security requirement and the error envelope', async () => {
    const doc = (await ctx.get('/docs/openapi.json')).json();
    expect(doc.openapi).toMatch(/^3\.1/);
    for (const [path, item] of Object.entries<Record<string, Record<string, unknown>>>(doc.paths)) {
      // The versioned API, and SCIM at the host root (/scim/v2).
      expect(path.startsWith('/api/v1/') || path.startsWith('/scim/v2/'), path).toBe(true);
      // SCIM's public discovery documents have no error answer.
      const discovery = /^\/scim\/v2\/(ServiceProviderConfig|ResourceTypes|Schemas)$/.test(path);
      for (const operation of Object.values(item)) {
        expect(operation.operationId).toEqual(expect.any(String));
        expect(operation.security).toBeDefined();
        const responses = operation.responses as Record<string, unknown>;
        if (!discovery)
          expect(
            Object.keys(responses).some((s) => s.startsWith('4')),
            path,
          ).toBe(true);
      }
    }
  });

  it('builds without warnings: no two DTO classes share a schema name', () => {
    expect(warnings).toEqual([]);
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await ctx.get('/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('swagger');
  });
});
