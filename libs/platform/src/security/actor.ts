import type { Plan } from '../config/app-config.js';
import type { Role } from './roles.js';

export type ActorType = 'user' | 'api_key' | 'agent' | 'scim' | 'system';
export type Credential = 'jwt' | 'workspaceKey' | 'agentKey';

/** Who is calling, resolved by the access guard from a JWT or an API key. */
export interface Actor {
  type: ActorType;
  credential: Credential;
  organizationId: string;
  plan: Plan;
  /** The user for a JWT; the key's creator for a workspace key. */
  userId: string | null;
  email: string | null;
  role: Role | null;
  /** JWT session fields. */
  jti?: string;
  tokenExpiresAt?: Date;
  /**
   * JWT: opened by this organization's single sign-on for an account the organization did not create. The IdP
   * vouched for the user here only, so account-wide changes need the account's own factor.
   * See docs/security.md, "Accounts and organizations that cannot be taken over"; test/tenant-takeover-*.e2e-spec.ts,
   * "finding 5".
   */
  ssoScoped?: boolean;
  /**
   * JWT: the membership was deactivated over SCIM. The session stays valid until it expires, for reading only
   * (docs/identity-administrators.md, "SCIM provisioning"; test/deprovisioning.e2e-spec.ts).
   */
  deactivated?: boolean;
  /** API key fields. */
  keyId?: string;
  agentId?: string;
  scope?: { agentIds?: string[]; readOnly?: boolean };
}

/** Request metadata recorded with audit entries. */
export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
}

/**
 * Whether the caller may see or act on an agent's data: a workspace key whose scope lists agents sees only
 * those; an agent key only its own agent; users and unscoped keys every agent of their organization.
 */
export function canAccessAgent(actor: Actor, agentId: string): boolean {
  if (actor.credential === 'agentKey') return actor.agentId === agentId;
  const allowed = actor.scope?.agentIds;
  return !allowed || allowed.length === 0 || allowed.includes(agentId);
}

/** The agents a caller is limited to, or null when it sees every agent of its organization. */
export function agentScopeOf(actor: Actor): string[] | null {
  if (actor.credential === 'agentKey') return actor.agentId ? [actor.agentId] : [];
  const allowed = actor.scope?.agentIds;
  return allowed && allowed.length > 0 ? allowed : null;
}
