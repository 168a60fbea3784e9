import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { TestContext } from './app.js';
import { cookieValue, setCookies } from './cookies.js';
import type { LocalOAuthProvider, SocialUser } from './oauth-provider.js';

/**
 * The session that a successful SSO (OIDC or SAML) or social callback hands over (302 to `APP_URL/auth/callback`
 * with the httpOnly `svc_oauth_token` cookie, `SameSite=Lax` outside production, no MFA step), collected with
 * `GET /auth/oauth-token` as the dashboard does; that answer clears the cookie.
 */
export async function collectHandOff(ctx: TestContext, res: LightMyRequestResponse): Promise<string> {
  expect(res.statusCode, res.body).toBe(302);
  expect(res.headers.location).toBe(`${ctx.config.appUrl}/auth/callback`);
  expect(setCookies(res).has('svc_sso_mfa')).toBe(false);
  const setCookie = setCookies(res).get('svc_oauth_token');
  expect(setCookie).toMatch(/HttpOnly/);
  expect(setCookie).toMatch(/SameSite=Lax/);
  const cookie = cookieValue(setCookie);
  expect(cookie).toBeTruthy();
  const taken = await ctx.get('/api/v1/auth/oauth-token', {
    headers: { cookie: `svc_oauth_token=${encodeURIComponent(cookie!)}` },
  });
  expect(taken.statusCode, taken.body).toBe(200);
  expect(setCookies(taken).get('svc_oauth_token')).toMatch(/Max-Age=0/);
  return taken.json().data.token;
}

/**
 * A browser's social sign-in through the local provider: the start route's redirect, the provider's return, and the
 * callback with the state cookie. `provider.next` is who signs in. The callback's response.
 */
export async function socialSignIn(
  ctx: TestContext,
  provider: LocalOAuthProvider,
  name: 'github' | 'google' | 'microsoft',
  user: SocialUser,
): Promise<LightMyRequestResponse> {
  provider.next = user;
  const started = await ctx.get(`/api/v1/auth/${name}`);
  expect(started.statusCode, started.body).toBe(302);
  const state = cookieValue(setCookies(started).get('svc_oauth_state'))!;
  const back = await fetch(started.headers.location as string, { redirect: 'manual' });
  const returned = new URL(back.headers.get('location')!);
  return ctx.request('GET', `${returned.pathname}${returned.search}`, {
    headers: { cookie: `svc_oauth_state=${encodeURIComponent(state)}` },
  });
}
