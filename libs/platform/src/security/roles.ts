import type { Plan } from '../config/app-config.js';

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const FEATURES = [
  'friaWizard',
  'complianceMapping',
  'scheduledReports',
  'sso',
  'scim',
  'cpiFeedbackIngest',
] as const;
export type Feature = (typeof FEATURES)[number];

const GOVERNANCE: readonly Feature[] = ['friaWizard', 'complianceMapping', 'scheduledReports', 'sso'];
const ENTERPRISE: readonly Feature[] = [...GOVERNANCE, 'scim', 'cpiFeedbackIngest'];

/**
 * The plan table (docs/identity-administrators.md, "Identity, roles and plans"): which features each plan unlocks.
 */
export const PLAN_FEATURES: Readonly<Record<Plan, readonly Feature[]>> = {
  sandbox: [],
  scale: [],
  governance: GOVERNANCE,
  enterprise: ENTERPRISE,
  custom: FEATURES,
};

export function planHasFeature(plan: Plan, feature: Feature): boolean {
  return PLAN_FEATURES[plan].includes(feature);
}

/**
 * The role matrix as one table: each action names the roles that may take it.
 * Controllers refer to these through `@Access({ roles: Permission.x })`.
 * See docs/identity-administrators.md, "Teams"; test/role-matrix.e2e-spec.ts walks every route with every role
 * against a table written out by hand.
 */
export const Permission = {
  read: ['owner', 'admin', 'member', 'viewer'],
  editPolicies: ['owner', 'admin'],
  editAgents: ['owner', 'admin', 'member'],
  resolveReviews: ['owner', 'admin', 'member'],
  manageTeam: ['owner', 'admin'],
  manageOrganization: ['owner', 'admin'],
  /**
   * What connects the organization to an identity provider: the SCIM token and the SSO configuration (its role
   * mapping included). Either can grant or take the owner role, so only owners write them.
   * See docs/security.md, "Accounts and organizations that cannot be taken over"; test/tenant-takeover-*.e2e-spec.ts,
   * "finding 3".
   */
  connectIdentityProvider: ['owner'],
  readAudit: ['owner', 'admin'],
  deleteAlerts: ['owner'],
  billing: ['owner', 'admin'],
  purge: ['owner'],
  /** A person's decisions (GET /subjects/:ref/decisions, the report): personal data, so not every member's. */
  readSubjects: ['owner', 'admin'],
  /** A person's erasure and legal holds: irreversible, or stopping what the law requires, so owners only. */
  eraseSubjects: ['owner'],
  deleteOrganization: ['owner'],
} as const satisfies Record<string, readonly Role[]>;

/**
 * The ownership rule of the role table: members edit only resources they created, owners and admins any
 * member's, viewers none. One check for every module whose resources have a creator (agents, alerts,
 * integrations).
 */
export function canEditOwnedResource(
  actor: { role: Role | null; userId: string | null },
  createdBy: string | null,
): boolean {
  if (actor.role === 'owner' || actor.role === 'admin') return true;
  return actor.role === 'member' && actor.userId !== null && actor.userId === createdBy;
}
