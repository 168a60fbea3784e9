export * from './audit/audit.module.js';
export * from './audit/audit.service.js';
export * from './audit/audit.schema.js';
export * from './audit/audit-hash.js';
