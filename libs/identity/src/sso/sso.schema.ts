import { sql } from 'drizzle-orm';
import { index, pgTable, primaryKey, text, timestamp, varchar } from 'drizzle-orm/pg-core';

/**
 * The e-mail domains that route to an organization's single sign-on. The domain is the primary key,
 * so a domain belongs to at most one organization, whatever the replicas do at the same time.
 * See docs/identity-administrators.md, "Proving a domain by DNS".
 */
export const ssoDomains = pgTable(
  'sso_domains',
  {
    domain: varchar('domain', { length: 253 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('sso_domains_org_idx').on(t.organizationId)],
);

export type SsoDomainRow = typeof ssoDomains.$inferSelect;

export type SsoDomainStatus = 'pending' | 'verified' | 'failing';

/**
 * An organization's claim on an e-mail domain and its proof: a TXT record `_governance-challenge.<domain>`
 * holding `challenge`. Several organizations may hold pending claims on one domain; the first whose record is found
 * owns it, and only then does the domain enter `sso_domains` and route sign-in. A verified domain whose record
 * disappears is re-checked daily (`lastCheckedAt`), and once it has been missing since `missingSince` for 7 days it
 * is `failing` and leaves `sso_domains`.
 * See docs/identity-administrators.md, "Proving a domain by DNS"; test/sso-domains.e2e-spec.ts.
 */
export const ssoDomainClaims = pgTable(
  'sso_domain_claims',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    domain: varchar('domain', { length: 253 }).notNull(),
    challenge: varchar('challenge', { length: 64 }).notNull(),
    status: varchar('status', { length: 10 }).$type<SsoDomainStatus>().notNull(),
    verifiedAt: timestamp('verified_at', { withTimezone: true, precision: 3 }),
    lastCheckedAt: timestamp('last_checked_at', { withTimezone: true, precision: 3 }),
    missingSince: timestamp('missing_since', { withTimezone: true, precision: 3 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.domain] }),
    index('sso_domain_claims_domain_idx').on(t.domain),
    index('sso_domain_claims_recheck_idx')
      .on(t.lastCheckedAt)
      .where(sql`status <> 'pending'`),
  ],
);

export type SsoDomainClaimRow = typeof ssoDomainClaims.$inferSelect;

/**
 * A sign-in under way, from `POST /auth/sso/initiate` to the IdP's return (10 minutes at most). Keyed by the
 * SHA-256 of the `state` sent to the IdP and deleted when the callback reads it, so a state (and its code) is
 * used once, on any replica. `browserHash` binds it to the browser that started it (the SHA-256 of its binding
 * cookie); the PKCE verifier is sealed.
 */
export const ssoLoginStates = pgTable(
  'sso_login_states',
  {
    id: varchar('id', { length: 64 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    provider: varchar('provider', { length: 8 }).notNull(),
    nonce: varchar('nonce', { length: 64 }).notNull(),
    codeVerifierSealed: text('code_verifier_sealed').notNull(),
    browserHash: varchar('browser_hash', { length: 64 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [index('sso_login_states_expires_idx').on(t.expiresAt)],
);

export type SsoLoginStateRow = typeof ssoLoginStates.$inferSelect;

/**
 * A SAML request this service sent and whose answer it awaits: an AuthnRequest (10 minutes) or a
 * LogoutRequest. Keyed by the request's ID; the answer's InResponseTo must name one of its organization's, and the
 * row is deleted when an answer is accepted, so it is accepted once on any replica.
 * See docs/identity-administrators.md, "Single sign-on: SAML sign-in and single logout".
 */
export const samlRequests = pgTable(
  'saml_requests',
  {
    id: varchar('id', { length: 128 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    kind: varchar('kind', { length: 8 }).notNull().$type<'authn' | 'logout'>(),
    /** An AuthnRequest's browser: the SHA-256 of its `svc_saml_binding` cookie (null for a LogoutRequest). */
    browserHash: varchar('browser_hash', { length: 64 }),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    index('saml_requests_org_idx').on(t.organizationId),
    index('saml_requests_expires_idx').on(t.expiresAt),
  ],
);

export type SamlRequestRow = typeof samlRequests.$inferSelect;

/**
 * The ids of the SAML assertions accepted, per organization, kept past their validity: an assertion is accepted
 * once, on any replica (the primary key settles a race).
 */
export const samlAssertions = pgTable(
  'saml_assertions',
  {
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    assertionId: varchar('assertion_id', { length: 256 }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organizationId, t.assertionId] }),
    index('saml_assertions_expires_idx').on(t.expiresAt),
  ],
);
