import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionService } from '#identity';
import { newId, type Role, ROLES } from '#platform';
import { type Registered, TestContext } from './support/app.js';
import { listRoutes } from './support/routes.js';

const ALL: readonly Role[] = ROLES;
const OWNER_ADMIN: readonly Role[] = ['owner', 'admin'];
const EDIT_AGENTS: readonly Role[] = ['owner', 'admin', 'member'];
/** Routes that no user session may call (key-only routes). */
const NOBODY: readonly Role[] = [];

/**
 * The role table (docs/identity-administrators.md, "Identity, roles and plans" and "Teams"), written out
 * route by route. It is not derived from the code: a route whose declaration drifts from it fails here, and a
 * route missing from it fails the completeness test.
 */
const EXPECTED: Record<string, readonly Role[] | 'public'> = {
  'GET /api/v1/health': 'public',
  'GET /api/v1/health/live': 'public',
  'GET /api/v1/health/ready': 'public',
  'GET /api/v1/versions': 'public',
  // Organization
  'GET /api/v1/organizations/current': ALL,
  'PATCH /api/v1/organizations/current': OWNER_ADMIN,
  // Deleting the organization: the owner only (docs/compliance-officers.md, "Organization deletion")
  'DELETE /api/v1/organizations/current': ['owner'],
  // Audit log (owner, admin)
  'GET /api/v1/audit': OWNER_ADMIN,
  'GET /api/v1/audit/:id': OWNER_ADMIN,
  'GET /api/v1/audit/verify': OWNER_ADMIN,
  'GET /api/v1/audit/export': OWNER_ADMIN,
  // Signed checkpoints (docs/compliance-officers.md, "Audit log"): owner, admin; their public keys for anyone
  'GET /api/v1/audit/checkpoints': OWNER_ADMIN,
  'POST /api/v1/audit/checkpoints': OWNER_ADMIN,
  'GET /api/v1/audit/public-key': 'public',
  // Public identity routes
  'POST /api/v1/auth/register': 'public',
  'POST /api/v1/auth/login': 'public',
  'POST /api/v1/auth/request-signup': 'public',
  'POST /api/v1/auth/complete-signup': 'public',
  'POST /api/v1/auth/forgot-password': 'public',
  'POST /api/v1/auth/reset-password': 'public',
  'POST /api/v1/auth/magic-link': 'public',
  'POST /api/v1/auth/magic-link/verify': 'public',
  'POST /api/v1/auth/mfa/login': 'public',
  'POST /api/v1/auth/mfa/resend': 'public',
  'POST /api/v1/auth/passkeys/registration/options': 'public',
  'POST /api/v1/auth/passkeys/registration/verify': 'public',
  'POST /api/v1/auth/passkeys/authentication/options': 'public',
  'POST /api/v1/auth/passkeys/authentication/verify': 'public',
  'DELETE /api/v1/auth/passkeys/:id': 'public',
  'DELETE /api/v1/auth/trusted-devices/:deviceId': 'public',
  'POST /api/v1/auth/account/unlock-request': 'public',
  'POST /api/v1/auth/password-history/check': 'public',
  'POST /api/v1/auth/verify-email': 'public',
  'POST /api/v1/auth/resend-verification': 'public',
  // A user's own account: every role
  'GET /api/v1/auth/me': ALL,
  'POST /api/v1/auth/logout': ALL,
  'POST /api/v1/auth/refresh': ALL,
  'POST /api/v1/auth/revoke-sessions': ALL,
  'POST /api/v1/auth/revoke-session': ALL,
  'GET /api/v1/auth/sessions': ALL,
  'PATCH /api/v1/auth/me/session-timeout': ALL,
  'GET /api/v1/auth/me/orgs': ALL,
  'POST /api/v1/auth/switch-org': ALL,
  'PATCH /api/v1/auth/profile': ALL,
  'GET /api/v1/auth/me/preferences': ALL,
  'PATCH /api/v1/auth/me/preferences': ALL,
  'GET /api/v1/auth/login-activity': ALL,
  'GET /api/v1/auth/security-settings': ALL,
  'POST /api/v1/auth/change-password': ALL,
  'POST /api/v1/auth/mfa/setup': ALL,
  'POST /api/v1/auth/mfa/enable': ALL,
  'POST /api/v1/auth/mfa/disable': ALL,
  'POST /api/v1/auth/backup-codes/generate': ALL,
  'POST /api/v1/auth/stream-token': ALL,
  // Workspace keys: organization-level integration credentials (owner, admin)
  'POST /api/v1/auth/keys': OWNER_ADMIN,
  'GET /api/v1/auth/keys': OWNER_ADMIN,
  'PATCH /api/v1/auth/keys/:id': OWNER_ADMIN,
  'DELETE /api/v1/auth/keys/:id': OWNER_ADMIN,
  // Team: everyone reads the member list; inviting and changing roles is owner or admin
  'GET /api/v1/team/members': ALL,
  'PATCH /api/v1/team/members/:userId/role': OWNER_ADMIN,
  'PATCH /api/v1/team/members/:userId/status': OWNER_ADMIN,
  'PATCH /api/v1/team/members/:userId/reactivate': OWNER_ADMIN,
  'DELETE /api/v1/team/members/:userId': OWNER_ADMIN,
  'GET /api/v1/team/invites': OWNER_ADMIN,
  'POST /api/v1/team/invite': OWNER_ADMIN,
  'DELETE /api/v1/team/invites/:id': OWNER_ADMIN,
  'POST /api/v1/team/invites/:id/resend': OWNER_ADMIN,
  'GET /api/v1/team/invites/validate/:token': 'public',
  'POST /api/v1/team/invites/:token/accept': 'public',
  // Agents: everyone reads; owners, admins and members create and edit (members their own: ownership is checked
  // per agent, so with an unknown id a member meets 404, not 403); viewers do not
  'GET /api/v1/agents': ALL,
  'GET /api/v1/agents/:id': ALL,
  'POST /api/v1/agents': EDIT_AGENTS,
  'PATCH /api/v1/agents/:id': EDIT_AGENTS,
  'DELETE /api/v1/agents/:id': EDIT_AGENTS,
  'POST /api/v1/agents/:id/regenerate-key': EDIT_AGENTS,
  // Policies: everyone reads; owners and admins write
  'GET /api/v1/policies': ALL,
  'GET /api/v1/policies/templates': ALL,
  'GET /api/v1/policies/:id': ALL,
  'POST /api/v1/policies': OWNER_ADMIN,
  'PATCH /api/v1/policies/:id': OWNER_ADMIN,
  'DELETE /api/v1/policies/:id': OWNER_ADMIN,
  // Traces: everyone reads; ingestion takes an agent (or writable workspace) key, so a user session is refused
  'GET /api/v1/traces': ALL,
  'GET /api/v1/traces/:id': ALL,
  'GET /api/v1/traces/:id/similar': ALL,
  // The explanation of one decision (EU AI Act art. 86): whoever may read the trace
  'GET /api/v1/traces/:id/explanation': ALL,
  'POST /api/v1/traces': NOBODY,
  'POST /api/v1/otel/v1/traces': NOBODY,
  // Review queue: everyone reads; owners, admins and members decide and assign (escalated items: owner, admin,
  // checked per item)
  'GET /api/v1/review-queue': ALL,
  'POST /api/v1/review-queue/:id/decision': EDIT_AGENTS,
  'POST /api/v1/review-queue/bulk-decision': EDIT_AGENTS,
  'PATCH /api/v1/review-queue/:id/assign': EDIT_AGENTS,
  // Approval patterns: everyone reads; owners and admins sign off and revoke
  'GET /api/v1/approval-patterns': ALL,
  'POST /api/v1/approval-patterns/:id/signoff': OWNER_ADMIN,
  'POST /api/v1/approval-patterns/:id/revoke': OWNER_ADMIN,
  // Webhooks: members and viewers read; owners and admins (or a writable workspace key) write
  'GET /api/v1/webhooks': ALL,
  'GET /api/v1/webhooks/:id': ALL,
  'POST /api/v1/webhooks': OWNER_ADMIN,
  'PATCH /api/v1/webhooks/:id': OWNER_ADMIN,
  'DELETE /api/v1/webhooks/:id': OWNER_ADMIN,
  'POST /api/v1/webhooks/:id/rotate-secret': OWNER_ADMIN,
  'POST /api/v1/webhooks/:id/test': OWNER_ADMIN,
  'GET /api/v1/webhooks/:id/deliveries': ALL,
  'POST /api/v1/webhooks/:id/deliveries/:deliveryId/redeliver': OWNER_ADMIN,
  // FRIA: everyone reads (with its verification and history); owners, admins and members write and move it;
  // approval is owner or admin (a move to approved through /transition is checked in the service)
  'GET /api/v1/fria': ALL,
  'POST /api/v1/fria': EDIT_AGENTS,
  'GET /api/v1/fria/:id': ALL,
  'PATCH /api/v1/fria/:id': EDIT_AGENTS,
  'DELETE /api/v1/fria/:id': EDIT_AGENTS,
  'POST /api/v1/fria/:id/transition': EDIT_AGENTS,
  'POST /api/v1/fria/:id/submit': EDIT_AGENTS,
  'POST /api/v1/fria/:id/approve': OWNER_ADMIN,
  'GET /api/v1/fria/:id/verify': ALL,
  'GET /api/v1/fria/:id/history': ALL,
  // Compliance mapping: everyone reads; owners and admins attest
  'GET /api/v1/compliance/catalogue': ALL,
  'GET /api/v1/compliance/crosswalk': ALL,
  'GET /api/v1/compliance/mapping': ALL,
  'PATCH /api/v1/compliance/mapping': OWNER_ADMIN,
  'GET /api/v1/compliance/mapping-notes': ALL,
  'PUT /api/v1/compliance/mapping-notes': OWNER_ADMIN,
  // Incidents: everyone reads; owners, admins and members record and move them
  'GET /api/v1/incidents': ALL,
  'POST /api/v1/incidents': EDIT_AGENTS,
  'GET /api/v1/incidents/:id': ALL,
  'PATCH /api/v1/incidents/:id': EDIT_AGENTS,
  // Integrations: everyone reads; owners, admins and members (their own) create, edit, test and delete
  'GET /api/v1/integrations': ALL,
  'POST /api/v1/integrations': EDIT_AGENTS,
  'GET /api/v1/integrations/:id': ALL,
  'PATCH /api/v1/integrations/:id': EDIT_AGENTS,
  'DELETE /api/v1/integrations/:id': EDIT_AGENTS,
  'POST /api/v1/integrations/:id/test': EDIT_AGENTS,
  // A recipient who is not a member confirms by the link mailed to it (docs/compliance-officers.md, "Integrations")
  'POST /api/v1/integrations/confirm': 'public',
  // Alerts: everyone reads; owners, admins and members (their own) create and edit; the owner alone deletes
  'GET /api/v1/alerts': ALL,
  'POST /api/v1/alerts': EDIT_AGENTS,
  'GET /api/v1/alerts/:id': ALL,
  'GET /api/v1/alerts/:id/history': ALL,
  'PATCH /api/v1/alerts/:id': EDIT_AGENTS,
  'DELETE /api/v1/alerts/:id': ['owner'],
  // SSO sign-in: the browser's side is public (the dispatcher, the IdP's return, the cookie hand-offs)
  'POST /api/v1/auth/sso/initiate': 'public',
  'GET /api/v1/auth/sso/callback': 'public',
  'GET /api/v1/auth/oauth-token': 'public',
  'GET /api/v1/auth/sso/mfa-exchange': 'public',
  // SAML: the browser's side and the metadata are public; the SP-initiated logout is every signed-in user's
  'POST /api/v1/auth/saml/initiate': 'public',
  'POST /api/v1/auth/saml/callback': 'public',
  'GET /api/v1/auth/saml/metadata/:orgId': 'public',
  'POST /api/v1/auth/saml/logout/initiate': ALL,
  'POST /api/v1/auth/saml/logout/callback': 'public',
  'GET /api/v1/auth/saml/logout/callback': 'public',
  // Social login: browser redirects, public
  'GET /api/v1/auth/github': 'public',
  'GET /api/v1/auth/github/callback': 'public',
  'GET /api/v1/auth/google': 'public',
  'GET /api/v1/auth/google/callback': 'public',
  'GET /api/v1/auth/microsoft': 'public',
  'GET /api/v1/auth/microsoft/callback': 'public',
  // SSO configuration: owners and admins
  'GET /api/v1/sso/config': OWNER_ADMIN,
  // Writing the IdP or its role mapping can grant the owner role: owners only (docs/security.md,
  // "Accounts and organizations that cannot be taken over").
  'PUT /api/v1/sso/config': ['owner'],
  'DELETE /api/v1/sso/config': ['owner'],
  'POST /api/v1/sso/config/test': OWNER_ADMIN,
  // Domain claims and their DNS proof: a verified domain routes sign-in, so owners only
  // (docs/identity-administrators.md, "Proving a domain by DNS").
  'GET /api/v1/sso/domains': ['owner'],
  'POST /api/v1/sso/domains': ['owner'],
  'POST /api/v1/sso/domains/:domain/verify': ['owner'],
  'DELETE /api/v1/sso/domains/:domain': ['owner'],
  // SCIM token: read by owners and admins, minted and revoked by owners only, since SCIM can move anyone into the
  // owner group (feature scim); the SCIM routes themselves take the SCIM token, not a session
  'POST /api/v1/sso/scim-token': ['owner'],
  'GET /api/v1/sso/scim-token': OWNER_ADMIN,
  'DELETE /api/v1/sso/scim-token': ['owner'],
  'GET /scim/v2/ServiceProviderConfig': 'public',
  'GET /scim/v2/ResourceTypes': 'public',
  'GET /scim/v2/ResourceTypes/:id': 'public',
  'GET /scim/v2/Schemas': 'public',
  'GET /scim/v2/Schemas/:id': 'public',
  'GET /scim/v2/Users': 'public',
  'GET /scim/v2/Users/:id': 'public',
  'POST /scim/v2/Users': 'public',
  'PUT /scim/v2/Users/:id': 'public',
  'PATCH /scim/v2/Users/:id': 'public',
  'DELETE /scim/v2/Users/:id': 'public',
  'GET /scim/v2/Groups': 'public',
  'GET /scim/v2/Groups/:id': 'public',
  'PATCH /scim/v2/Groups/:id': 'public',
  'POST /scim/v2/Groups': 'public',
  'PUT /scim/v2/Groups/:id': 'public',
  'DELETE /scim/v2/Groups/:id': 'public',
  // Purge: the owner only
  'POST /api/v1/traces/purge': ['owner'],
  // The content check of one trace: whoever may read the trace
  'GET /api/v1/traces/:id/verify': ALL,
  // The people decisions are about (GDPR articles 15 and 17): owners and admins read; owners erase and hold
  'GET /api/v1/subjects/:ref/decisions': OWNER_ADMIN,
  'GET /api/v1/subjects/:ref/report': OWNER_ADMIN,
  'GET /api/v1/subjects/:ref/erasure': OWNER_ADMIN,
  'POST /api/v1/subjects/:ref/erasure': ['owner'],
  'POST /api/v1/subjects/:ref/hold': ['owner'],
  'DELETE /api/v1/subjects/:ref/hold': ['owner'],
  // Billing: every role sees the plan; owners and admins start a checkout or open the portal
  'GET /api/v1/billing/plan': ALL,
  'POST /api/v1/billing/checkout': OWNER_ADMIN,
  'POST /api/v1/billing/portal': OWNER_ADMIN,
  // Reports: everyone reads the compliance PDF; owners and admins schedule digests
  'GET /api/v1/reports/compliance': ALL,
  'GET /api/v1/reports/schedule': OWNER_ADMIN,
  'POST /api/v1/reports/schedule': OWNER_ADMIN,
  'GET /api/v1/reports/schedule/:id': OWNER_ADMIN,
  'PATCH /api/v1/reports/schedule/:id': OWNER_ADMIN,
  'DELETE /api/v1/reports/schedule/:id': OWNER_ADMIN,
  'POST /api/v1/reports/send-now/:id': OWNER_ADMIN,
  // CPI: everyone reads the rollups; feedback comes only from a workspace key
  'GET /api/v1/cpi': ALL,
  'GET /api/v1/cpi/analytics': ALL,
  'POST /api/v1/cpi/ingest': NOBODY,
  // The event stream authenticates with a stream token, not a session (the WebSocket is not a controller route)
  'GET /api/v1/events/stream': 'public',
};

describe('role matrix', () => {
  let ctx: TestContext;
  let owner: Registered;
  const users = new Map<Role, string>();

  beforeAll(async () => {
    ctx = await TestContext.create();
    owner = await ctx.register({ organizationName: 'Matrix' });
    // Every feature on, so that only roles decide.
    await ctx.setPlan(owner.organization.id, 'custom');
    users.set('owner', owner.user.id);
    for (const role of ['admin', 'member', 'viewer'] as const) {
      users.set(role, (await ctx.addMember(owner.organization.id, role)).userId);
    }
  });
  afterAll(async () => ctx?.close());

  /** A fresh session per request, so that routes that end sessions (logout, revoke) do not affect the next. */
  async function tokenFor(role: Role): Promise<string> {
    const { token } = await ctx.app.get(SessionService).open({
      sessionId: newId(),
      userId: users.get(role)!,
      organizationId: owner.organization.id,
      role,
      timeout: '7d',
    });
    return token;
  }

  it('lists every route of the application, and only those', () => {
    const actual = listRoutes(ctx.app).map((r) => `${r.method} ${r.path}`);
    expect([...actual].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  const cases = Object.entries(EXPECTED).flatMap(([route, allowed]) =>
    allowed === 'public' ? [] : ALL.map((role) => [route, role, allowed.includes(role)] as const),
  );

  it.each(cases)('%s as %s: allowed=%s', async (route, role, allowed) => {
    const [method, path] = route.split(' ') as [string, string];
    // Parameters get an id that exists nowhere: an allowed role then meets 404 or 400, never 403.
    const url = path.replace(/:[A-Za-z]+/g, 'f'.repeat(24));
    const res = await ctx.request(method, url, {
      token: await tokenFor(role),
      body: method === 'GET' || method === 'DELETE' ? undefined : {},
    });
    if (allowed) {
      expect(res.statusCode, res.body).not.toBe(403);
      expect(res.statusCode, res.body).toBeLessThan(500);
    } else {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().code).toBe('FORBIDDEN');
    }
  });
});
