export * from './identity.module.js';
export * from './organizations/organizations.service.js';
export * from './sessions/session.service.js';
export * from './sessions/token.service.js';
export * from './api-keys/stream-token.service.js';
export type { ApiKeyScope } from './api-keys/api-key.schema.js';
export * from './api-keys/api-keys.module.js';
export * from './api-keys/agent-keys.repository.js';
