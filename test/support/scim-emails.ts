import { expect } from 'vitest';
import type { AuditEntry } from './audit-entries.js';
import { MailCatcher } from './mail-catcher.js';
import { PATCH_SCHEMA, type ScimOrg, USER_SCHEMA } from './scim.js';
import { ScimSuite } from './scim-suite.js';
import { useSuite } from './suite.js';

/*
 * The helpers of the suites on what an organization's IdP writes over SCIM (test/scim-emails.e2e-spec.ts, item 8, and
 * test/scim-names.e2e-spec.ts, item 7 of issue 29): kept for that organization and returned exactly as written, while
 * the account itself follows the IdP only when it is the organization's own and unshared. See
 * docs/identity-administrators.md, "SCIM provisioning".
 */

export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const WORK_PATH = 'emails[type eq "work"].value';
export const INVITES = '/api/v1/team/invites';
export const CHOSEN_PASSWORD = 'Chosen-Pass-4242';

export type Org = ScimOrg;
export interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

/**
 * The e-mail and name suites' world: an application that sends its mail to `mail`, with the organizations named (each
 * with a SCIM token). Its fields are set before the first test (read them inside a test); its helpers may be taken at
 * once.
 */
export class ScimEmailSuite extends ScimSuite {
  private counter = 0;

  constructor(organizations: string[]) {
    super({ organizations, mail: true });
  }

  /** A fresh address in the IdP's domain. */
  readonly address = (prefix: string) => `${prefix}.${++this.counter}@contoso.example`;

  /** Entra ID's "Create User" body (Microsoft Learn, SCIM tutorial): the work e-mail is the userName. */
  readonly provisionLikeEntra = async (
    org: Org,
    userName: string,
    name = { givenName: 'Ada', familyName: 'Lovelace' },
  ) => {
    const res = await org.client.post('/Users', {
      schemas: [USER_SCHEMA, ENTERPRISE],
      externalId: `ext-${userName}`,
      userName,
      active: true,
      emails: [{ primary: true, type: 'work', value: userName }],
      meta: { resourceType: 'User' },
      name: { formatted: `${name.givenName} ${name.familyName}`, ...name },
      roles: [],
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; userName: string; emails: ScimEmail[] };
  };

  readonly scimGet = async (org: Org, id: string): Promise<Record<string, unknown>> => {
    const res = await org.client.get(`/Users/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  /** Entra ID's exact PATCH of the work e-mail ("Add" or "Replace", capitalised). */
  readonly entraEmailPatch = (op: 'Add' | 'Replace', value: string) => ({
    schemas: [PATCH_SCHEMA],
    Operations: [{ op, path: WORK_PATH, value }],
  });

  readonly filterIds = async (org: Org, filter: string): Promise<string[]> => {
    const res = await org.client.get(`/Users?filter=${encodeURIComponent(filter)}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().Resources as { id: string }[]).map((r) => r.id);
  };

  readonly updates = async (org: Org, userId: string): Promise<AuditEntry[]> => {
    const res = await this.ctx.get('/api/v1/audit', {
      token: org.owner.token,
      query: { eventType: 'scim.user.updated', limit: '100' },
    });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as AuditEntry[]).filter((e) => e.targetId === userId);
  };

  /** An invitation from `ownerToken`'s organization to `email`: its id and the e-mailed token. */
  readonly invite = async (ownerToken: string, email: string): Promise<{ id: string; token: string }> => {
    const before = this.mail.forRecipient(email).length;
    const res = await this.ctx.post('/api/v1/team/invite', {
      token: ownerToken,
      body: { email, role: 'member' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const deadline = Date.now() + 5000;
    while (this.mail.forRecipient(email).length <= before) {
      if (Date.now() > deadline) throw new Error(`No invitation e-mail to ${email}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return {
      id: res.json().data.id,
      token: MailCatcher.tokenFrom(this.mail.forRecipient(email).at(-1)!, '/invite/'),
    };
  };

  readonly accept = (token: string, body: Record<string, unknown> = {}) =>
    this.ctx.post(`${INVITES}/${token}/accept`, { body });
}

/** An e-mail and name suite with these SCIM organizations, registered in the calling `describe`. */
export const scimEmailSuite = (organizations: string[]) => useSuite(new ScimEmailSuite(organizations));
