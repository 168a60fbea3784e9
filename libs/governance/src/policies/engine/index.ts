export {
  type CompiledCondition,
  type CompiledPolicy,
  type ConditionError,
  type ConditionField,
  type ConditionOperator,
  type ConditionValue,
  type FixedField,
  type Policy,
  type PolicyCondition,
  type PolicyInput,
  type PolicyMatchMode,
  type PolicyOutcome,
  type TraceFacts,
  FIXED_FIELDS,
  InvalidPolicyError,
  LIMITS,
  OPERATORS,
  parseMetadataPath,
  POLICY_DEFAULTS,
  POLICY_MATCH_MODES,
  POLICY_OUTCOMES,
} from './condition.js';
export { compile, compilePattern, validateConditions } from './validate-conditions.js';
export {
  type EvaluationResult,
  type EvaluationStatus,
  type PolicyEvaluation,
  type PolicyResult,
  comparePolicies,
  evaluate,
} from './evaluate.js';
export {
  type PolicyTemplate,
  findPolicyTemplate,
  POLICY_TEMPLATES,
  RETIRED_TEMPLATE_PATTERNS,
} from './templates.js';
export { estimateConfidence, HEDGING_PHRASES, REFUSAL_PHRASES } from './confidence.js';
