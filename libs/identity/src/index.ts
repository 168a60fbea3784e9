export * from './identity.module.js';
export * from './organizations/organizations.service.js';
export * from './organizations/organization-export.service.js';
export * from './organizations/organization-erasure.job.js';
export { OrganizationErrorCode } from './organizations/organizations.errors.js';
export * from './sessions/session.service.js';
export {
  ACCESS_REVOKED_CHANNEL,
  accessRevokedNoticeOf,
  type AccessRevokedNotice,
} from './sessions/access-revocations.js';
export * from './sessions/token.service.js';
export * from './api-keys/stream-token.service.js';
export type { ApiKeyScope } from './api-keys/api-key.schema.js';
export * from './api-keys/api-keys.module.js';
export * from './api-keys/agent-keys.repository.js';
export { type KeyAuditChange, WorkspaceKeyAgents } from './api-keys/workspace-key-agents.service.js';
export * from './identity-core.module.js';
export { MembersRepository, type MemberView } from './organizations/members.repository.js';
export { isOrganizationLive, organizationIsLive } from './organizations/organization.queries.js';
