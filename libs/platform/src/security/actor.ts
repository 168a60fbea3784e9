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
