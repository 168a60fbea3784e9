export * from './audit/audit.module.js';
export * from './audit/audit.service.js';
export * from './agents/agents.module.js';
export * from './policies/policies.module.js';
export * from './traces/traces.module.js';
export * from './review/review.module.js';
export * from './review/review-queue.module.js';
export * from './approval-patterns/approval-patterns.module.js';
