import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestContext } from './support/app.js';

describe('health', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(async () => ctx?.close());

  it('answers GET /api/v1/health with status, timestamp and a database check, without credentials', async () => {
    const res = await ctx.get('/api/v1/health');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.success).toBe(true);
    expect(body.data.status).toBe('ok');
    expect(body.data.checks.database).toBe('up');
    expect(body.data.timestamp).toBe(ctx.clock.now().toISOString());
  });

  it('serves the same handler at the root /health for load balancers', async () => {
    const res = await ctx.get('/health');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.status).toBe('ok');
    expect(res.headers.deprecation).toBeUndefined();
  });
});
