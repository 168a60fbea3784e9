import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { EventStreamHub } from '#governance';
import { type Registered, replicaContext, TEST_PASSWORD, TestContext, uniqueEmail } from './support/app.js';
import { expectErrorEnvelope } from './support/assertions.js';
import { ingestFlagged, refundFlagPolicy } from './support/review-suite.js';
import { patchOp, scimOrganization } from './support/scim.js';
import { member, MEMBERS } from './support/team-suite.js';
import { TRACES } from './support/traces-suite.js';

const STREAM = '/api/v1/events/stream';
const STREAM_TOKEN = '/api/v1/auth/stream-token';
const KEYS = '/api/v1/auth/keys';
const INVITE = '/api/v1/team/invite';
const INVITES = '/api/v1/team/invites';
const ME = '/api/v1/auth/me';
/**
 * How long a revoked stream may stay open (at once, on every replica: docs/security.md,
 * "Accounts and organizations that cannot be taken over").
 */
const CLOSE_WITHIN_MS = 1000;

type Member = { userId: string; email: string; token: string };

/** An SSE stream read over a real HTTP connection: what arrived so far, and whether the server ended it. */
interface SseStream {
  text: () => string;
  ended: Promise<true>;
  isEnded: () => boolean;
  close: () => Promise<void>;
}

interface WsStream {
  socket: WebSocket;
  messages: { id: string; type: string; data: Record<string, unknown> }[];
  closed: Promise<{ code: number; reason: string }>;
}

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The promise's value if it settles within `ms`, else 'still open'. */
async function within<T>(promise: Promise<T>, ms = CLOSE_WITHIN_MS): Promise<T | 'still open'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'still open'>((resolve) => (timer = setTimeout(() => resolve('still open'), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const baseOf = (app: TestContext) =>
  `http://127.0.0.1:${(app.app.getHttpServer().address() as AddressInfo).port}`;

async function streamToken(app: TestContext, jwt: string): Promise<string> {
  const res = await app.post(STREAM_TOKEN, { token: jwt });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.token as string;
}

/** Opens `GET /events/stream` on the listening application and waits until the hub has subscribed it. */
async function openSse(app: TestContext, jwt: string): Promise<SseStream> {
  const hub = app.service(EventStreamHub);
  const before = hub.opened;
  const res = await fetch(`${baseOf(app)}${STREAM}?token=${await streamToken(app, jwt)}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let done = false;
  const ended = (async (): Promise<true> => {
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        text += decoder.decode(chunk.value, { stream: true });
      }
    } catch {
      // A reset counts as ended too.
    }
    done = true;
    return true;
  })();
  await until(() => hub.opened > before, 'the SSE subscription');
  return {
    text: () => text,
    ended,
    isEnded: () => done,
    close: () => reader.cancel().catch(() => undefined),
  };
}

/** Opens the WebSocket stream and waits until the hub has subscribed it. */
async function openWs(app: TestContext, jwt: string): Promise<WsStream> {
  const hub = app.service(EventStreamHub);
  const before = hub.opened;
  const token = await streamToken(app, jwt);
  const socket = new WebSocket(`${baseOf(app).replace('http', 'ws')}/api/v1/events/ws?token=${token}`);
  const messages: WsStream['messages'] = [];
  socket.on('message', (raw) => messages.push(JSON.parse(raw.toString())));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve());
    socket.on('error', reject);
  });
  await until(() => hub.opened > before, 'the WebSocket subscription');
  return { socket, messages, closed };
}

describe('deprovisioning: SCIM deactivation, workspace keys of former members, and their open streams', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create();
    await ctx.app.listen(0, '127.0.0.1');
  });
  afterAll(async () => ctx?.close());

  /** An Enterprise organization with SCIM: its owner, an admin (the one deprovisioned), a viewer, an agent. */
  async function organization(name: string) {
    const { owner, client } = await scimOrganization(ctx, name);
    const org = owner.organization.id;
    const admin = await ctx.addMember(org, 'admin');
    const bystander = await ctx.addMember(org, 'viewer');
    const agent = await ctx.newAgent(org, 'Streamed');
    await refundFlagPolicy(ctx, org, []);
    return { owner, scim: client, org, admin, bystander, agent };
  }

  async function createKey(jwt: string, name = 'CI'): Promise<string> {
    const res = await ctx.post(KEYS, { token: jwt, body: { name } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.key as string;
  }

  async function keyNames(ownerToken: string): Promise<string[]> {
    const res = await ctx.get(KEYS, { token: ownerToken, query: { limit: '100' } });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { name: string }[]).map((k) => k.name).sort();
  }

  /** A workspace key that names no one any more: 401, as an unknown key. */
  function expectKeyRefused(res: LightMyRequestResponse): void {
    expect(res.statusCode, res.body).toBe(401);
    expect(res.json()).toMatchObject({ success: false });
    expect(res.json()).not.toHaveProperty('data');
  }

  /**
   * What a SCIM-deactivated admin's session, key and password still do: reads 200; every write 403
   * ACCOUNT_DEACTIVATED and nothing written; refresh and a new sign-in 401 ACCOUNT_DEACTIVATED; the key 401.
   */
  async function expectDeactivated(owner: Registered, admin: Member, key: string): Promise<void> {
    const me = await ctx.get(ME, { token: admin.token });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json().data).toMatchObject({ role: 'admin' });
    expect((await ctx.get(MEMBERS, { token: admin.token })).statusCode).toBe(200);
    expect((await ctx.get(TRACES, { token: admin.token })).statusCode).toBe(200);

    expectErrorEnvelope(
      await ctx.post('/api/v1/auth/refresh', { token: admin.token }),
      401,
      'ACCOUNT_DEACTIVATED',
    );
    const keysBefore = await keyNames(owner.token);
    expectErrorEnvelope(
      await ctx.post(KEYS, { token: admin.token, body: { name: 'After deactivation' } }),
      403,
      'ACCOUNT_DEACTIVATED',
    );
    expect(await keyNames(owner.token)).toEqual(keysBefore);
    expect(keysBefore).not.toContain('After deactivation');
    expectErrorEnvelope(await ctx.post(STREAM_TOKEN, { token: admin.token }), 403, 'ACCOUNT_DEACTIVATED');
    expectErrorEnvelope(
      await ctx.post(INVITE, {
        token: admin.token,
        body: { email: uniqueEmail('accomplice'), role: 'admin' },
      }),
      403,
      'ACCOUNT_DEACTIVATED',
    );
    const invites = await ctx.get(INVITES, { token: owner.token });
    expect(invites.statusCode, invites.body).toBe(200);
    expect(invites.json().data).toEqual([]);

    expectKeyRefused(await ctx.get(TRACES, { apiKey: key }));
    expectErrorEnvelope(
      await ctx.post('/api/v1/auth/login', { body: { email: admin.email, password: TEST_PASSWORD } }),
      401,
      'ACCOUNT_DEACTIVATED',
    );
    // The owner is untouched.
    expect((await ctx.get(TRACES, { token: owner.token })).statusCode).toBe(200);
    await streamToken(ctx, owner.token);
  }

  describe('SCIM deactivation (finding 4)', () => {
    it('PATCH active false ends the open stream, leaves the session read-only, stops the key; active true restores', async () => {
      const { owner, scim, admin } = await organization('Deactivated by PATCH');
      const key = await createKey(admin.token, 'Admin CI');
      expect((await ctx.get(TRACES, { apiKey: key })).statusCode).toBe(200);
      const stream = await openSse(ctx, admin.token);
      try {
        const res = await scim.patch(
          `/Users/${admin.userId}`,
          patchOp({ op: 'replace', path: 'active', value: false }),
        );
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ id: admin.userId, active: false });
        expect(await within(stream.ended)).toBe(true);

        await expectDeactivated(owner, admin, key);

        const back = await scim.patch(
          `/Users/${admin.userId}`,
          patchOp({ op: 'replace', path: 'active', value: true }),
        );
        expect(back.statusCode, back.body).toBe(200);
        expect(back.json()).toMatchObject({ active: true });
        expect((await ctx.get(TRACES, { apiKey: key })).statusCode).toBe(200);
        await createKey(admin.token, 'After reactivation');
        expect(await keyNames(owner.token)).toEqual(['Admin CI', 'After reactivation']);
        await streamToken(ctx, admin.token);
        const refreshed = await ctx.post('/api/v1/auth/refresh', { token: admin.token });
        expect(refreshed.statusCode, refreshed.body).toBe(200);
        expect((await ctx.get(ME, { token: refreshed.json().data.token })).statusCode).toBe(200);
        await ctx.login(admin.email);
      } finally {
        await stream.close();
      }
    });

    it('DELETE /Users/:id does the same; logout and revoke-sessions still work for the deactivated session', async () => {
      const { owner, scim, admin } = await organization('Deactivated by DELETE');
      const key = await createKey(admin.token, 'Admin CI');
      const second = await ctx.login(admin.email);
      const stream = await openSse(ctx, admin.token);
      try {
        const res = await scim.delete(`/Users/${admin.userId}`);
        expect(res.statusCode, res.body).toBe(204);
        expect(await within(stream.ended)).toBe(true);
        expect((await scim.get(`/Users/${admin.userId}`)).json()).toMatchObject({ active: false });

        await expectDeactivated(owner, admin, key);

        const out = await ctx.post('/api/v1/auth/logout', { token: admin.token });
        expect(out.statusCode, out.body).toBe(200);
        expectErrorEnvelope(await ctx.get(ME, { token: admin.token }), 401, 'SESSION_REVOKED');
        const swept = await ctx.post('/api/v1/auth/revoke-sessions', { token: second });
        expect(swept.statusCode, swept.body).toBe(200);
        expect(swept.json().data).toEqual({ revoked: 1 });
        expectErrorEnvelope(await ctx.get(ME, { token: second }), 401, 'SESSION_REVOKED');
        expectKeyRefused(await ctx.get(TRACES, { apiKey: key }));
      } finally {
        await stream.close();
      }
    });
  });

  it('a workspace key stops with its creator’s membership (suspended, removed); an active admin’s keeps working', async () => {
    const owner = await ctx.register({ organizationName: 'Key creators' });
    const org = owner.organization.id;
    const [suspended, removed, kept] = [
      await ctx.addMember(org, 'admin'),
      await ctx.addMember(org, 'admin'),
      await ctx.addMember(org, 'admin'),
    ];
    const keys = {
      suspended: await createKey(suspended!.token, 'suspended'),
      removed: await createKey(removed!.token, 'removed'),
      kept: await createKey(kept!.token, 'kept'),
      owner: await createKey(owner.token, 'owner'),
    };
    for (const key of Object.values(keys))
      expect((await ctx.get(TRACES, { apiKey: key })).statusCode).toBe(200);

    const suspend = await ctx.patch(`${member(suspended!.userId)}/status`, {
      token: owner.token,
      body: { isActive: false },
    });
    expect(suspend.statusCode, suspend.body).toBe(200);
    const remove = await ctx.delete(member(removed!.userId), { token: owner.token });
    expect(remove.statusCode, remove.body).toBe(200);

    expectKeyRefused(await ctx.get(TRACES, { apiKey: keys.suspended }));
    expectKeyRefused(await ctx.get(TRACES, { apiKey: keys.removed }));
    expectKeyRefused(await ctx.get('/api/v1/webhooks', { apiKey: keys.removed }));
    expect((await ctx.get(TRACES, { apiKey: keys.kept })).statusCode).toBe(200);
    expect((await ctx.get(TRACES, { apiKey: keys.owner })).statusCode).toBe(200);

    const back = await ctx.patch(`${member(suspended!.userId)}/reactivate`, { token: owner.token });
    expect(back.statusCode, back.body).toBe(200);
    expect((await ctx.get(TRACES, { apiKey: keys.suspended })).statusCode).toBe(200);
    expectKeyRefused(await ctx.get(TRACES, { apiKey: keys.removed }));
  });

  describe('open streams end with the access that opened them (finding 6)', () => {
    type Fixture = Awaited<ReturnType<typeof organization>>;
    const NEW_PASSWORD = 'An0ther-Secret-pass';

    /** What ends the admin's access (or narrows it), and the status it answers. */
    const TRIGGERS: [string, (f: Fixture) => Promise<LightMyRequestResponse>, number][] = [
      [
        'suspension (team API)',
        (f) =>
          ctx.patch(`${member(f.admin.userId)}/status`, { token: f.owner.token, body: { isActive: false } }),
        200,
      ],
      ['removal (team API)', (f) => ctx.delete(member(f.admin.userId), { token: f.owner.token }), 200],
      [
        'a role change (team API)',
        (f) =>
          ctx.patch(`${member(f.admin.userId)}/role`, { token: f.owner.token, body: { role: 'viewer' } }),
        200,
      ],
      [
        'a move to another SCIM group',
        (f) =>
          f.scim.patch(
            '/Groups/reviewer',
            patchOp({ op: 'add', path: 'members', value: [{ value: f.admin.userId }] }),
          ),
        204,
      ],
      ['logout', (f) => ctx.post('/api/v1/auth/logout', { token: f.admin.token }), 200],
      [
        'revoke-session of the session that opened it',
        async (f) => {
          const own = await ctx.login(f.admin.email);
          const listed = await ctx.get('/api/v1/auth/sessions', { token: own });
          const stolen = (listed.json().data as { sessionId: string; current: boolean }[]).filter(
            (s) => !s.current,
          );
          expect(stolen).toHaveLength(1);
          return ctx.post('/api/v1/auth/revoke-session', {
            token: own,
            body: { sessionId: stolen[0]!.sessionId },
          });
        },
        200,
      ],
      [
        'revoke-sessions',
        async (f) => ctx.post('/api/v1/auth/revoke-sessions', { token: await ctx.login(f.admin.email) }),
        200,
      ],
      [
        'a password change',
        async (f) =>
          ctx.post('/api/v1/auth/change-password', {
            token: await ctx.login(f.admin.email),
            body: { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD },
          }),
        200,
      ],
    ];

    it.each(TRIGGERS)(
      '%s closes the user’s SSE and WebSocket streams; another member’s stream stays and gets the next event',
      async (_, trigger, status) => {
        const f = await organization('Streams');
        const sse = await openSse(ctx, f.admin.token);
        const ws = await openWs(ctx, f.admin.token);
        const other = await openSse(ctx, f.bystander.token);
        try {
          // All three are live before.
          const warm = await ingestFlagged(ctx, f.agent);
          await until(
            () =>
              sse.text().includes(warm.traceId) &&
              other.text().includes(warm.traceId) &&
              ws.messages.some((m) => m.data.traceId === warm.traceId),
            'the first event on every stream',
          );

          const res = await trigger(f);
          expect(res.statusCode, res.body).toBe(status);
          expect(await within(sse.ended)).toBe(true);
          expect(await within(ws.closed)).toMatchObject({ code: 4401 });

          const next = await ingestFlagged(ctx, f.agent);
          await until(
            () => other.text().includes(next.traceId),
            'the next event on the other member’s stream',
          );
          expect(other.isEnded()).toBe(false);
          expect(sse.text()).not.toContain(next.traceId);
          expect(ws.messages.map((m) => m.data.traceId)).toEqual([warm.traceId]);
        } finally {
          await sse.close();
          await other.close();
          ws.socket.close();
        }
      },
    );

    // On PostgreSQL the second instance has its own connections and hears the first through LISTEN/NOTIFY; on PGlite
    // the two share the embedded database and its in-process bus.
    it('a stream token belongs to the session that minted it: after its logout it opens nothing', async () => {
      const f = await organization('Stream token of a session');
      const token = await streamToken(ctx, f.admin.token);
      expect((await ctx.post('/api/v1/auth/logout', { token: f.admin.token })).statusCode).toBe(200);
      const res = await fetch(`${baseOf(ctx)}${STREAM}?token=${token}`);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('UNAUTHORIZED');
      // A token of a live session still opens the stream.
      const sse = await openSse(ctx, await ctx.login(f.admin.email));
      expect(sse.isEnded()).toBe(false);
      await sse.close();
    });

    it('a suspension through one replica closes the user’s stream on another', async () => {
      const f = await organization('Replicated streams');
      const replica = await replicaContext(ctx);
      try {
        await replica.app.listen(0, '127.0.0.1');
        const sse = await openSse(replica, f.admin.token);
        const ws = await openWs(replica, f.admin.token);
        const other = await openSse(replica, f.bystander.token);
        const warm = await ingestFlagged(ctx, f.agent);
        await until(
          () => sse.text().includes(warm.traceId) && other.text().includes(warm.traceId),
          'the first event on the replica’s streams',
        );
        const res = await ctx.patch(`${member(f.admin.userId)}/status`, {
          token: f.owner.token,
          body: { isActive: false },
        });
        expect(res.statusCode, res.body).toBe(200);
        expect(await within(sse.ended)).toBe(true);
        expect(await within(ws.closed)).toMatchObject({ code: 4401 });

        const next = await ingestFlagged(ctx, f.agent);
        await until(() => other.text().includes(next.traceId), 'the next event on the replica');
        expect(other.isEnded()).toBe(false);
      } finally {
        // Closing the replica ends what is still open on it.
        await replica.close();
      }
    });
  });
});
