import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { users } from '../../libs/identity/src/users/user.schema.js';
import { type Registered, TestContext, type TestAppOptions } from './app.js';
import { cookieValue as valueOf, setCookies } from './cookies.js';
import {
  ASSERTION_XPATH,
  type AssertionOptions,
  IDP_KEYS,
  readRedirect,
  SamlIdp,
  samlForm,
  sign,
} from './saml-idp.js';
import { collectHandOff } from './sign-in.js';
import { SuiteFixture, useSuite } from './suite.js';
import { verifySsoDomains } from './sso-domains.js';
import { TestDns } from './test-dns.js';

export const API = '/api/v1';
export const INITIATE = `${API}/auth/sso/initiate`;
export const ACS_PATH = `${API}/auth/saml/callback`;
export const LOGOUT_CALLBACK = `${API}/auth/saml/logout/callback`;
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The service provider of one organization as the IdP sees it, and the helpers to play its browser. */
export function samlHarness(context: () => TestContext, idp: SamlIdp) {
  const publicUrl = () => context().config.publicUrl;
  const acs = () => `${publicUrl()}${ACS_PATH}`;
  const logoutCallback = () => `${publicUrl()}${LOGOUT_CALLBACK}`;
  const entityId = (organizationId: string) => `${publicUrl()}${API}/auth/saml/metadata/${organizationId}`;

  /** The browser's binding cookie of the last sign-in started (the IdP posts back to the same browser). */
  let binding: string | undefined;

  /** The dispatcher's AuthnRequest for `email`, read back from its redirect URL; keeps the binding cookie. */
  async function start(email: string) {
    const res = await context().post(INITIATE, { body: { email } });
    expect(res.statusCode, res.body).toBe(200);
    const redirectUrl: string = res.json().data.redirectUrl;
    expect(redirectUrl.startsWith(`${idp.entryPoint}?`), redirectUrl).toBe(true);
    const cookie = setCookies(res).get('svc_saml_binding')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure; SameSite=None/);
    expect(cookie).toMatch(/Path=\/api\/v1\/auth\/saml/);
    binding = valueOf(cookie);
    return { ...readRedirect(redirectUrl), binding };
  }

  /** An assertion of the IdP (unsigned) in answer to `requestId`, for this organization's SP. */
  const assertion = (
    organizationId: string,
    requestId: string,
    over: Partial<AssertionOptions> & { email: string },
  ): string =>
    idp.assertion({ inResponseTo: requestId, audience: entityId(organizationId), recipient: acs(), ...over });

  /** A response the IdP signs the usual way: the assertion signed, for this organization's SP. */
  function response(
    organizationId: string,
    requestId: string,
    over: Partial<AssertionOptions> & { email: string },
  ): string {
    return idp.response({
      inResponseTo: requestId,
      destination: acs(),
      inner: sign(assertion(organizationId, requestId, over), ASSERTION_XPATH),
    });
  }

  /** Posts a SAML message as the browser would: a form, with the binding cookie of the last sign-in started. */
  const post = (xml: string, path = ACS_PATH, field = 'SAMLResponse', cookie = binding) =>
    context().request('POST', path, {
      payload: samlForm({ [field]: xml }),
      headers: { ...FORM, ...(cookie ? { cookie: `svc_saml_binding=${encodeURIComponent(cookie)}` } : {}) },
    });

  /** The session a successful callback left in its cookie, collected as the dashboard does. */
  const collect = (res: LightMyRequestResponse) => collectHandOff(context(), res);

  const failed = (res: LightMyRequestResponse) => {
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(`${context().config.appUrl}/login?error=sso_failed`);
    expect(setCookies(res).has('svc_oauth_token')).toBe(false);
  };

  return { acs, logoutCallback, entityId, start, assertion, response, post, collect, failed };
}

/** Configures SAML for the owner's organization and proves its domain on `dns`, so that the domain routes. */
export async function configureSaml(
  ctx: TestContext,
  dns: TestDns,
  owner: Registered,
  idp: SamlIdp,
  domain: string,
  extra = {},
) {
  await ctx.setPlan(owner.organization.id, 'governance');
  const put = await ctx.request('PUT', `${API}/sso/config`, {
    token: owner.token,
    body: {
      provider: 'saml',
      emailDomains: [domain],
      roleMappingRules: [{ pattern: '^gov-admins$', role: 'admin' }],
      saml: {
        entryPoint: idp.entryPoint,
        idpCertificate: IDP_KEYS.cert,
        idpIssuer: idp.entityId,
        logoutUrl: idp.logoutUrl,
      },
      ...extra,
    },
  });
  expect(put.statusCode, put.body).toBe(200);
  await verifySsoDomains(ctx, owner.token, dns);
}

export interface SamlSuiteOptions {
  organizationName: string;
  /** The organization's e-mail domain, proven on the suite's DNS server. */
  domain: string;
  /** Application settings beside the DNS server's. */
  config?: TestAppOptions['config'];
}

/**
 * One organization signing in with SAML at a test IdP, on an application of its own with a DNS server that proves
 * the organization's domain. Its fields are set before the first test (read them inside a test).
 */
export class SamlSuite extends SuiteFixture {
  ctx!: TestContext;
  dns!: TestDns;
  owner!: Registered;
  org!: string;
  readonly idp = new SamlIdp();
  readonly h = samlHarness(() => this.ctx, this.idp);

  constructor(private readonly options: SamlSuiteOptions) {
    super();
  }

  /** A whole sign-in of `email` with the given assertion fields: the session token. */
  readonly signIn = async (email: string, over: Partial<AssertionOptions> = {}) => {
    const request = await this.h.start(email);
    return this.h.collect(await this.h.post(this.h.response(this.org, request.id, { email, ...over })));
  };

  readonly userExists = async (email: string) =>
    (await this.ctx.db.db.select().from(users).where(eq(users.email, email))).length > 0;

  async start(): Promise<void> {
    this.dns = await this.open(TestDns.start(), (dns) => dns.stop());
    this.ctx = await this.openApp({ config: { ...this.options.config, ssoDnsServers: [this.dns.address] } });
    this.owner = await this.ctx.register({ organizationName: this.options.organizationName });
    this.org = this.owner.organization.id;
    await configureSaml(this.ctx, this.dns, this.owner, this.idp, this.options.domain);
  }
}

/** A SAML suite, registered in the calling `describe`. */
export const samlSuite = (options: SamlSuiteOptions) => useSuite(new SamlSuite(options));
