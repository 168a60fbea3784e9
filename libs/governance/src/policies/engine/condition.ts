/**
 * Types and limits of the policy engine. Framework-free: the policies module
 * stores and serves these shapes, trace ingestion evaluates them.
 * See docs/agent-builders.md, "Decision pipeline"; validate-conditions.spec.ts.
 */

import type { PiiEntity } from '../../pii/index.js';

export const POLICY_OUTCOMES = ['block', 'flag'] as const;
export type PolicyOutcome = (typeof POLICY_OUTCOMES)[number];

export const POLICY_MATCH_MODES = ['all', 'any'] as const;
export type PolicyMatchMode = (typeof POLICY_MATCH_MODES)[number];

/** Fields with a fixed name; `metadata.<path>` is the one open-ended field. */
export const FIXED_FIELDS = [
  'inputContext.prompt',
  'inputContext.systemPrompt',
  'outputDecision.text',
  'outputDecision.action',
  'toolCalls.name',
  'confidence',
  'agentId',
] as const;
export type FixedField = (typeof FIXED_FIELDS)[number];
export type ConditionField = FixedField | `metadata.${string}`;

export const METADATA_PREFIX = 'metadata.';

export const OPERATORS = [
  'equals',
  'not_equals',
  'contains',
  'not_contains',
  'matches',
  'in',
  'not_in',
  'gt',
  'gte',
  'lt',
  'lte',
  'exists',
  'not_exists',
  'containsPii',
] as const;
export type ConditionOperator = (typeof OPERATORS)[number];

export type ConditionValue = string | number | boolean | readonly (string | number)[];

export interface PolicyCondition {
  readonly field: string;
  readonly operator: ConditionOperator;
  /** Absent (or `true`) for `exists` / `not_exists`. */
  readonly value?: ConditionValue;
  /** `containsPii` only: the lowest detector score that counts, 0 to 1 (default the detectors' `DEFAULT_MIN_SCORE`). */
  readonly minScore?: number;
}

export interface Policy {
  readonly id: string;
  readonly name: string;
  readonly outcome: PolicyOutcome;
  readonly conditions: readonly PolicyCondition[];
  readonly match: PolicyMatchMode;
  /** Empty: every agent of the organization. */
  readonly agentIds: readonly string[];
  /** Lower runs (and is reported) first. */
  readonly priority: number;
  readonly isActive: boolean;
}

/**
 * A policy as the caller may hold it: the defaults (`POLICY_DEFAULTS`: match all, every agent, priority 100,
 * active) fill what is left out.
 */
export type PolicyInput = Omit<Policy, 'match' | 'agentIds' | 'priority' | 'isActive'> &
  Partial<Pick<Policy, 'match' | 'agentIds' | 'priority' | 'isActive'>>;

export const POLICY_DEFAULTS = { match: 'all', agentIds: [], priority: 100, isActive: true } as const;

export const LIMITS = {
  maxConditions: 20,
  maxPatternLength: 512,
  /**
   * RE2 runs in linear time, but the constant grows with the compiled program: `(?:a?){1000}a{1000}`
   * (3,002 instructions) takes about 0.4 s on a 50,000-character prompt, so larger programs are refused.
   */
  maxPatternProgramSize: 1000,
  maxListValues: 100,
  maxMetadataPathLength: 200,
  maxMetadataSegments: 8,
} as const;

/** Path segments are kept to a safe alphabet so a path can never be read as syntax anywhere it is shown. */
const METADATA_SEGMENT = /^[A-Za-z0-9_-]+$/;

/** The segments of a `metadata.<path>` field, or null when the field is not a well-formed metadata path. */
export function parseMetadataPath(field: string): string[] | null {
  if (!field.startsWith(METADATA_PREFIX) || field.length > LIMITS.maxMetadataPathLength) return null;
  const segments = field.slice(METADATA_PREFIX.length).split('.');
  if (segments.length > LIMITS.maxMetadataSegments) return null;
  return segments.every((s) => METADATA_SEGMENT.test(s)) ? segments : null;
}

export function isFixedField(field: string): field is FixedField {
  return (FIXED_FIELDS as readonly string[]).includes(field);
}

export function isOperator(operator: unknown): operator is ConditionOperator {
  return typeof operator === 'string' && (OPERATORS as readonly string[]).includes(operator);
}

/** What a trace offers to policy conditions (the stored trace has more; conditions see only this). */
export interface TraceFacts {
  readonly agentId: string;
  readonly confidence: number;
  readonly inputContext: { readonly prompt: string; readonly systemPrompt?: string | null };
  readonly outputDecision: {
    readonly action: string;
    readonly text: string;
    readonly toolCalls?: readonly { readonly name: string; readonly arguments?: unknown }[] | null;
  };
  readonly metadata?: Readonly<Record<string, unknown>> | null;
}

/**
 * Per-trace memo shared by the conditions of one evaluation: lower-cased texts for `contains`, and the PII types
 * found in a text for each distinct `containsPii` question (its types and score). `piiHits` collects the types the
 * conditions of the policy being evaluated found, for its result.
 */
export interface EvaluationScratch {
  readonly lowered: Map<string, string>;
  readonly pii: Map<string, Map<string, readonly PiiEntity[]>>;
  readonly piiHits: Set<PiiEntity>;
}

export function newEvaluationScratch(): EvaluationScratch {
  return { lowered: new Map(), pii: new Map(), piiHits: new Set() };
}

export interface CompiledCondition {
  readonly field: string;
  readonly operator: ConditionOperator;
  readonly test: (trace: TraceFacts, scratch: EvaluationScratch) => boolean;
}

export interface CompiledPolicy {
  readonly id: string;
  readonly name: string;
  readonly outcome: PolicyOutcome;
  readonly match: PolicyMatchMode;
  /** null: every agent. */
  readonly agentIds: ReadonlySet<string> | null;
  readonly priority: number;
  readonly isActive: boolean;
  readonly conditions: readonly CompiledCondition[];
}

export interface ConditionError {
  field: string;
  message: string;
}

/** Thrown by `compile` for a policy that does not validate; `details` has the same shape as a 400's. */
export class InvalidPolicyError extends Error {
  constructor(readonly details: ConditionError[]) {
    super(`Invalid policy: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`);
    this.name = 'InvalidPolicyError';
  }
}
