import { createHash } from 'node:crypto';
import { Controller, Get, Module, Query } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeysModule } from '../libs/identity/src/api-keys/api-keys.module.js';
import { OneTimeTokenService } from '../libs/identity/src/tokens/one-time-token.service.js';
import { oneTimeTokens } from '../libs/identity/src/tokens/token.schema.js';
import { AppError, Public } from '#platform';
import { StreamTokenService } from '#identity';
import { type Registered, TestContext } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';

const STREAM_TOKEN = '/api/v1/auth/stream-token';
const CONSUME = '/api/v1/test-stream';

/** Stands in for the event stream: consumes the token the way `GET /events/stream` will. */
@Controller('test-stream')
class TestStreamController {
  constructor(private readonly streamTokens: StreamTokenService) {}

  @Get()
  @Public()
  async open(@Query('token') token: string) {
    const principal = await this.streamTokens.consume(token ?? '');
    if (!principal) throw AppError.unauthorized('Invalid or expired stream token');
    return principal;
  }
}

@Module({ imports: [ApiKeysModule], controllers: [TestStreamController] })
class TestStreamModule {}

describe('stream tokens', () => {
  let ctx: TestContext;
  let owner: Registered;
  beforeAll(async () => {
    ctx = await TestContext.create({ imports: [TestStreamModule] });
    owner = await ctx.register();
  });
  afterAll(async () => ctx?.close());

  async function mint(token = owner.token): Promise<{ token: string; expiresAt: string }> {
    const res = await ctx.post(STREAM_TOKEN, { token });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  }

  it('mints a single-use token valid 60 seconds, stored only as its hash', async () => {
    const res = await ctx.post(STREAM_TOKEN, { token: owner.token });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const data = res.json().data;
    expect(data).toEqual({
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expiresAt: new Date(ctx.clock.nowMs() + 60_000).toISOString(),
    });
    const hash = createHash('sha256').update(data.token).digest('hex');
    const [row] = await ctx.db.db.select().from(oneTimeTokens).where(eq(oneTimeTokens.tokenHash, hash));
    expect(row).toMatchObject({
      purpose: 'stream',
      userId: owner.user.id,
      organizationId: owner.organization.id,
      usedAt: null,
    });
    expect(JSON.stringify(row)).not.toContain(data.token);
  });

  it('is accepted once with the user and organization, and refused the second time with 401', async () => {
    const { token } = await mint();
    const first = await ctx.get(CONSUME, { query: { token } });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().data).toEqual({ userId: owner.user.id, organizationId: owner.organization.id });
    expectErrorEnvelope(await ctx.get(CONSUME, { query: { token } }), 401, 'UNAUTHORIZED');
  });

  it('is accepted at 59 seconds and refused at 60 seconds', async () => {
    const early = await mint();
    const late = await mint();
    ctx.clock.advance(59_000);
    expect((await ctx.get(CONSUME, { query: { token: early.token } })).statusCode).toBe(200);
    ctx.clock.advance(1_000);
    expectErrorEnvelope(await ctx.get(CONSUME, { query: { token: late.token } }), 401, 'UNAUTHORIZED');
  });

  it('lets exactly one of several concurrent consumptions of the same token succeed', async () => {
    const { token } = await mint();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => ctx.get(CONSUME, { query: { token } })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 401, 401, 401, 401]);
  });

  it('refuses unknown, empty and missing tokens, and tokens of another purpose', async () => {
    for (const query of [{ token: 'x'.repeat(43) }, { token: '' }, {}] as Record<string, string>[]) {
      expectErrorEnvelope(await ctx.get(CONSUME, { query }), 401, 'UNAUTHORIZED');
    }
    const magicLink = await ctx.app.get(OneTimeTokenService).issue({
      purpose: 'magic_link',
      ttlMs: 60_000,
      userId: owner.user.id,
      organizationId: owner.organization.id,
    });
    expectErrorEnvelope(await ctx.get(CONSUME, { query: { token: magicLink.token } }), 401, 'UNAUTHORIZED');
    expect(await ctx.app.get(StreamTokenService).consume(owner.token)).toBeUndefined();
  });

  it('binds the token to the active organization of the session that minted it', async () => {
    const member = await ctx.addMember(owner.organization.id, 'viewer');
    const { token } = await mint(member.token);
    const res = await ctx.get(CONSUME, { query: { token } });
    expect(res.json().data).toEqual({ userId: member.userId, organizationId: owner.organization.id });
  });

  it('requires a user session: 401 without one, 403 with an API key', async () => {
    expectErrorEnvelope(await ctx.post(STREAM_TOKEN), 401, 'UNAUTHORIZED');
    const created = await ctx.post('/api/v1/auth/keys', { token: owner.token, body: { name: 'Streamer' } });
    expect(created.statusCode).toBe(201);
    expectErrorEnvelope(await ctx.post(STREAM_TOKEN, { apiKey: created.json().data.key }), 403, 'FORBIDDEN');
  });
});
