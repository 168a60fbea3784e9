import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AuthService } from '../libs/identity/src/auth/auth.service.js';
import { AppLogger, requestContext } from '#platform';
import { TestContext } from './support/app.js';

/**
 * The request context behind every log line's `reqId`, over real sockets: a handler behind a parsed body sees its
 * own request's id, also when keep-alive connections carry one request after another; and the completion line.
 */
describe('request logging', () => {
  let ctx: TestContext;
  let base: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(async () => ctx?.close());
  afterEach(() => {
    vi.restoreAllMocks();
    ctx.service(AppLogger).pino.level = 'silent';
  });

  const login = (requestId: string) =>
    fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ email: `${requestId}@example.com`, password: 'not-the-password' }),
    });

  it('runs each handler in its own request’s context, across concurrent requests on kept-alive connections', async () => {
    const auth = ctx.service(AuthService);
    const original = auth.login.bind(auth);
    const seen = new Map<string, string | undefined>();
    vi.spyOn(auth, 'login').mockImplementation(async (dto, meta) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
      seen.set(dto.email.split('@')[0]!, requestContext.getStore());
      return original(dto, meta);
    });
    for (let round = 0; round < 3; round++) {
      const ids = Array.from({ length: 10 }, (_, i) => `log-${round}-${i}`);
      const answers = await Promise.all(ids.map(login));
      for (const [i, res] of answers.entries()) {
        expect(res.status).toBe(401);
        expect(res.headers.get('x-request-id')).toBe(ids[i]);
        await res.arrayBuffer();
      }
    }
    expect(seen.size).toBe(30);
    for (const [id, store] of seen) expect(store).toBe(id);
    expect(requestContext.getStore()).toBeUndefined();
  });

  it('writes the completion line at the level of the status, with the request’s id and no headers', async () => {
    const pino = ctx.service(AppLogger).pino;
    pino.level = 'info';
    const warn = vi.spyOn(pino, 'warn').mockImplementation(() => undefined);
    const res = await login('completion-1');
    expect(res.status).toBe(401);
    await res.arrayBuffer();
    await vi.waitFor(() => expect(warn).toHaveBeenCalled());
    const [fields, message] = warn.mock.calls.at(-1) as unknown as [Record<string, unknown>, string];
    expect(message).toBe('request completed');
    expect(fields).toMatchObject({
      reqId: 'completion-1',
      req: { id: 'completion-1', method: 'POST', url: '/api/v1/auth/login' },
      res: { statusCode: 401 },
    });
    expect(JSON.stringify(fields)).not.toContain('not-the-password');
    expect(fields.req).not.toHaveProperty('headers');
  });
});
