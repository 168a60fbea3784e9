export * from './audit/audit.module.js';
export * from './audit/audit.service.js';
export * from './audit/audit-checkpoints.service.js';
export * from './audit/audit-chain-reader.js';
export * from './agents/agents.module.js';
export * from './policies/policies.module.js';
export { PoliciesRepository } from './policies/policies.repository.js';
export * from './traces/traces.module.js';
export { TracesRepository } from './traces/traces.repository.js';
export * from './review/review.module.js';
export * from './review/review-queue.module.js';
export * from './approval-patterns/approval-patterns.module.js';
export * from './webhooks/webhooks.module.js';
export * from './events/event-stream.module.js';
export * from './events/event-stream.hub.js';
export * from './cpi/cpi.module.js';
export { TraceRollups } from './traces/trace-rollups.js';
export { ReviewItemsRepository } from './review/review-items.repository.js';
export { AgentsRepository } from './agents/agents.repository.js';
export * from './retention/retention.module.js';
export * from './subjects/subjects.module.js';
export { SubjectsService } from './subjects/subjects.service.js';
export { SUBJECT_REF } from './subjects/subjects.docs.js';
export * from './integrations/integrations.module.js';
export { IntegrationNotifier } from './integrations/integration-notifier.js';
export { IntegrationsRepository } from './integrations/integrations.repository.js';
export { TraceFeedbackRepository } from './cpi/trace-feedback.repository.js';
export {
  type PolicyCondition,
  type PolicyMatchMode,
  POLICY_TEMPLATES,
  RETIRED_TEMPLATE_PATTERNS,
} from './policies/engine/index.js';
