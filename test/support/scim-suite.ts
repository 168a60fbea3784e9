import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { hashPassword } from '../../libs/identity/src/auth/password.js';
import { users } from '../../libs/identity/src/users/user.schema.js';
import { type Registered, TEST_PASSWORD, type TestContext } from './app.js';
import { MailCatcher } from './mail-catcher.js';
import { filteredUserNames, provisionUser, type ScimClient, type ScimOrg, scimOrganization } from './scim.js';
import { type Client, expectScim, type Org, SCIM_BASE } from './scim-dialects.js';
import { SuiteFixture, useSuite } from './suite.js';
import { MEMBERS, type TeamMember } from './team-suite.js';

export interface ScimSuiteOptions {
  /** The organizations with a SCIM token made before the first test, in this order (`orgs`). */
  organizations?: string[];
  /** The application sends its mail to a mail catcher (`mail`). */
  mail?: boolean;
  /** Each test starts with fresh rate-limit windows: the limiters count on the test clock. */
  freshWindows?: boolean;
}

/**
 * The SCIM suites' world: an application (sending mail to `mail` when asked) and the organizations with a SCIM token
 * named in the options. Its fields are set before the first test (read them inside a test); its helpers may be taken
 * at once.
 */
export class ScimSuite extends SuiteFixture {
  ctx!: TestContext;
  mail!: MailCatcher;
  readonly orgs: ScimOrg[] = [];

  constructor(private readonly options: ScimSuiteOptions = {}) {
    super();
  }

  /** The first organization's owner. */
  get owner(): Registered {
    return this.orgs[0]!.owner;
  }

  /** The first organization's SCIM client. */
  get client(): ScimClient {
    return this.orgs[0]!.client;
  }

  /** Provisions a user in the first organization and answers its SCIM id. */
  readonly provision = (userName: string, extra: Record<string, unknown> = {}) =>
    provisionUser(this.client, userName, extra);

  /** The userNames a filter returns in the first organization, sorted. */
  readonly filter = (expression: string) => filteredUserNames(this.client, expression);

  /** Gives a provisioned account (no password) the test password, so that its holder can sign in. */
  readonly givePassword = async (userId: string): Promise<void> => {
    await this.ctx.db.db
      .update(users)
      .set({ passwordHash: await hashPassword(TEST_PASSWORD) })
      .where(eq(users.id, userId));
  };

  readonly login = (email: string, password = TEST_PASSWORD) =>
    this.ctx.post('/api/v1/auth/login', { body: { email, password } });

  /** The user as a member of the organization whose owner holds `ownerToken`, if it is one. */
  readonly memberIn = async (ownerToken: string, userId: string): Promise<TeamMember | undefined> => {
    const res = await this.ctx.get(MEMBERS, { token: ownerToken });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as TeamMember[]).find((m) => m.userId === userId);
  };

  override beforeEach(): void {
    if (this.options.freshWindows) this.ctx.clock.advance(15 * 60_000 + 1);
  }

  async start(): Promise<void> {
    if (this.options.mail) this.mail = await this.open(MailCatcher.start(), (mail) => mail.stop());
    this.ctx = await this.openApp(this.options.mail ? { config: { smtpUrl: this.mail.url } } : {});
    for (const name of this.options.organizations ?? [])
      this.orgs.push(await scimOrganization(this.ctx, name));
  }
}

/** A SCIM suite, registered in the calling `describe`. */
export const scimSuite = (options?: ScimSuiteOptions) => useSuite(new ScimSuite(options));

/**
 * The dialect suites' world: an application with Entra ID's organization ("Entra Org") and, when asked, Okta's ("Okta
 * Org", made after it), each with a SCIM token. Its fields are set before the first test (read them inside a test);
 * its helpers may be taken at once.
 */
export class ScimDialectSuite extends ScimSuite {
  constructor(options: { okta?: boolean }) {
    super({ organizations: options.okta ? ['Entra Org', 'Okta Org'] : ['Entra Org'] });
  }

  get entra(): Org {
    return this.orgs[0]!;
  }

  get okta(): Org {
    return this.orgs[1]!;
  }

  readonly me = (token: string): Promise<LightMyRequestResponse> =>
    this.ctx.get('/api/v1/auth/me', { token });

  /** The user as a member of the organization, if it is one. */
  readonly memberOf = (org: Org, userId: string) => this.memberIn(org.owner.token, userId);

  /** Creates a user as the IdP does: 201 with its Location. */
  readonly create = async (
    client: Client,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown>> => {
    const res = await client.post('/Users', body);
    const user = expectScim(res, 201);
    expect(res.headers.location).toBe(`${SCIM_BASE}/Users/${user.id as string}`);
    return user;
  };
}

/** A dialect suite, registered in the calling `describe`. */
export const scimDialectSuite = (options: { okta?: boolean } = {}) => useSuite(new ScimDialectSuite(options));
