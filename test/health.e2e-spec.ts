import { Controller, Module, Post } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Public } from '#platform';
import { TestContext } from './support/app.js';

const STALL_MS = 280;

/** A test-only route that holds the event loop, as a CPU-bound request would. */
@Controller('test-stall')
class StallController {
  @Post()
  @Public()
  stall(): { stalledMs: number } {
    const until = performance.now() + STALL_MS;
    while (performance.now() < until) {
      /* busy: nothing else runs */
    }
    return { stalledMs: STALL_MS };
  }
}

@Module({ controllers: [StallController] })
class StallModule {}

describe('health', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create({ imports: [StallModule] });
  });
  afterAll(async () => ctx?.close());

  it('answers GET /api/v1/health with status, timestamp and a database check, without credentials', async () => {
    const res = await ctx.get('/api/v1/health');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.success).toBe(true);
    expect(body.data.status).toBe('ok');
    // The loop may have been slow while the application booted: only the shape is certain here.
    expect(body.data.checks).toMatchObject({
      database: 'up',
      eventLoop: expect.stringMatching(/^(ok|slow)$/),
    });
    expect(body.data.checks.eventLoopDelayMs).toBeGreaterThanOrEqual(0);
    expect(body.data.timestamp).toBe(ctx.clock.now().toISOString());
  });

  it('serves the same handler at the root /health for load balancers', async () => {
    const res = await ctx.get('/health');
    expect(res.statusCode).toBe(200);
    expect(res.json().data.checks.database).toBe('up');
    expect(res.headers.deprecation).toBeUndefined();
  });

  it('reports a stalled event loop as its own check, not as a failed database check', async () => {
    // The health check sends its query, then another request holds the loop for 280 ms: the check's 250 ms
    // timer fires late, with the database's answer still unread in the socket.
    const pending = ctx.get('/health');
    const stall = ctx.post('/api/v1/test-stall');
    const res = await pending;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.checks.database).toBe('up');
    expect((await stall).statusCode).toBe(201);
    // The stall is in the monitor's ten-second window from now on: the next check reports it.
    const next = (await ctx.get('/health')).json().data;
    expect(next.status).toBe('ok');
    expect(next.checks).toMatchObject({ database: 'up', eventLoop: 'slow' });
    expect(next.checks.eventLoopDelayMs).toBeGreaterThanOrEqual(STALL_MS - 100);
  });
});
