import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestContext } from './app.js';
import { cookieValue, setCookies } from './cookies.js';

/**
 * The session that a successful SSO or social callback hands over (302 to `APP_URL/auth/callback` with the
 * httpOnly `svc_oauth_token` cookie, no MFA step), collected with `GET /auth/oauth-token` as the dashboard does.
 */
export async function collectHandOff(ctx: TestContext, res: LightMyRequestResponse): Promise<string> {
  expect(res.statusCode, res.body).toBe(302);
  expect(res.headers.location).toBe(`${ctx.config.appUrl}/auth/callback`);
  expect(setCookies(res).has('svc_sso_mfa')).toBe(false);
  const cookie = cookieValue(setCookies(res).get('svc_oauth_token'));
  expect(cookie).toBeTruthy();
  const taken = await ctx.get('/api/v1/auth/oauth-token', {
    headers: { cookie: `svc_oauth_token=${encodeURIComponent(cookie!)}` },
  });
  expect(taken.statusCode, taken.body).toBe(200);
  return taken.json().data.token;
}
