import { RE2JS } from 're2js';
import { DEFAULT_MIN_SCORE, isPiiEntity, PII_ENTITIES, type PiiEntity, piiTypesIn } from '../../pii/index.js';
import {
  type CompiledCondition,
  type CompiledPolicy,
  type ConditionError,
  type ConditionOperator,
  type EvaluationScratch,
  type PolicyCondition,
  type PolicyInput,
  type TraceFacts,
  InvalidPolicyError,
  isFixedField,
  isOperator,
  LIMITS,
  OPERATORS,
  parseMetadataPath,
  POLICY_DEFAULTS,
  POLICY_MATCH_MODES,
  POLICY_OUTCOMES,
} from './condition.js';

/** text: always a string; number: `confidence`; any: metadata values, whose type is known only per trace. */
type FieldKind = 'text' | 'number' | 'any';

const NUMERIC_OPERATORS: readonly ConditionOperator[] = ['gt', 'gte', 'lt', 'lte'];
const TEXT_OPERATORS: readonly ConditionOperator[] = ['contains', 'not_contains', 'matches', 'containsPii'];
const CONDITION_KEYS = new Set(['field', 'operator', 'value', 'minScore']);

function fieldKind(field: string): FieldKind | null {
  if (field === 'confidence') return 'number';
  if (isFixedField(field)) return 'text';
  return parseMetadataPath(field) ? 'any' : null;
}

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Compiles a `matches` pattern the one way the engine runs it; returns the refusal message on failure. */
export function compilePattern(pattern: string): RE2JS | string {
  if (pattern.length === 0) return 'pattern must not be empty';
  if (pattern.length > LIMITS.maxPatternLength) {
    return `pattern must be at most ${LIMITS.maxPatternLength} characters`;
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
  } catch (err) {
    // re2js messages quote the offending part ("missing closing ): `(a`"), which is what a caller needs.
    return `invalid RE2 pattern: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (re.programSize() > LIMITS.maxPatternProgramSize)
    return 'pattern is too complex (reduce repetition counts)';
  return re;
}

function checkScalar(kind: FieldKind, value: unknown, allowBoolean: boolean): string | null {
  if (kind === 'text') return typeof value === 'string' ? null : 'must be a string';
  if (kind === 'number') return isFiniteNumber(value) ? null : 'must be a finite number';
  if (typeof value === 'string' || isFiniteNumber(value)) return null;
  if (allowBoolean && typeof value === 'boolean') return null;
  return allowBoolean
    ? 'must be a string, a finite number or a boolean'
    : 'must be a string or a finite number';
}

function checkValue(kind: FieldKind, op: ConditionOperator, value: unknown, path: string): ConditionError[] {
  const at = `${path}.value`;
  const fail = (message: string): ConditionError[] => [{ field: at, message }];
  switch (op) {
    case 'exists':
    case 'not_exists':
      return value === undefined || value === true ? [] : fail('must be omitted or true');
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return isFiniteNumber(value) ? [] : fail('must be a finite number');
    case 'contains':
    case 'not_contains':
      return typeof value === 'string' && value.length > 0 ? [] : fail('must be a non-empty string');
    case 'containsPii': {
      if (!Array.isArray(value) || value.length === 0 || value.length > PII_ENTITIES.length) {
        return fail(`must be a non-empty array of PII types: ${PII_ENTITIES.join(', ')}`);
      }
      const errors: ConditionError[] = [];
      value.forEach((item, j) => {
        if (!isPiiEntity(item))
          errors.push({ field: `${at}[${j}]`, message: `must be one of ${PII_ENTITIES.join(', ')}` });
        else if (value.indexOf(item) !== j) errors.push({ field: `${at}[${j}]`, message: 'is listed twice' });
      });
      return errors;
    }
    case 'matches': {
      if (typeof value !== 'string') return fail('must be a string (an RE2 pattern)');
      const re = compilePattern(value);
      return typeof re === 'string' ? fail(re) : [];
    }
    case 'equals':
    case 'not_equals': {
      const problem = checkScalar(kind, value, true);
      return problem ? fail(problem) : [];
    }
    case 'in':
    case 'not_in': {
      if (!Array.isArray(value) || value.length === 0 || value.length > LIMITS.maxListValues) {
        return fail(`must be a non-empty array of at most ${LIMITS.maxListValues} values`);
      }
      const errors: ConditionError[] = [];
      value.forEach((item, j) => {
        const problem = checkScalar(kind, item, false);
        if (problem) errors.push({ field: `${at}[${j}]`, message: problem });
      });
      return errors;
    }
  }
}

function checkCondition(raw: unknown, path: string): ConditionError[] {
  if (!isRecord(raw)) return [{ field: path, message: 'must be an object with field, operator and value' }];
  const errors: ConditionError[] = [];
  for (const key of Object.keys(raw)) {
    if (!CONDITION_KEYS.has(key))
      errors.push({ field: path, message: `unknown property "${key.slice(0, 40)}"` });
  }
  const { field, operator, value, minScore } = raw;
  if (minScore !== undefined) {
    if (operator !== 'containsPii')
      errors.push({ field: `${path}.minScore`, message: 'applies only to the containsPii operator' });
    else if (!isFiniteNumber(minScore) || minScore < 0 || minScore > 1)
      errors.push({ field: `${path}.minScore`, message: 'must be a number from 0 to 1' });
  }
  let kind: FieldKind | null = null;
  if (typeof field !== 'string') {
    errors.push({ field: `${path}.field`, message: 'must be a string' });
  } else {
    kind = fieldKind(field);
    if (!kind) {
      errors.push({
        field: `${path}.field`,
        message: field.startsWith('metadata.')
          ? `metadata path must be 1 to ${LIMITS.maxMetadataSegments} dot-separated segments of A-Z, a-z, 0-9, _ or -, at most ${LIMITS.maxMetadataPathLength} characters in all`
          : 'unknown field',
      });
    }
  }
  if (!isOperator(operator)) {
    errors.push({
      field: `${path}.operator`,
      message: `unknown operator; expected one of ${OPERATORS.join(', ')}`,
    });
    return errors;
  }
  if (!kind) return errors;
  if (kind === 'text' && NUMERIC_OPERATORS.includes(operator)) {
    errors.push({
      field: `${path}.operator`,
      message: `${operator} applies only to confidence and metadata fields`,
    });
    return errors;
  }
  if (kind === 'number' && TEXT_OPERATORS.includes(operator)) {
    errors.push({ field: `${path}.operator`, message: `${operator} does not apply to confidence` });
    return errors;
  }
  return [...errors, ...checkValue(kind, operator, value, path)];
}

/** Every problem with a policy's `conditions`, each named by its path (`conditions[2].value`); [] when valid. */
export function validateConditions(conditions: unknown): ConditionError[] {
  if (!Array.isArray(conditions)) return [{ field: 'conditions', message: 'must be an array' }];
  // A policy without conditions would match every trace under `all`: almost certainly a mistake.
  if (conditions.length === 0)
    return [{ field: 'conditions', message: 'must contain at least one condition' }];
  if (conditions.length > LIMITS.maxConditions) {
    return [{ field: 'conditions', message: `must contain at most ${LIMITS.maxConditions} conditions` }];
  }
  return conditions.flatMap((c, i) => checkCondition(c, `conditions[${i}]`));
}

// ---- compilation ---------------------------------------------------------------------------------

type Reader = (trace: TraceFacts) => unknown;
type Predicate = (value: unknown, scratch: EvaluationScratch) => boolean;

const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

/** Walks own properties only (so `__proto__` or `constructor` never reach the prototype); arrays by index. */
function readPath(root: unknown, segments: readonly string[]): unknown {
  let current = root;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    if (Array.isArray(current)) {
      if (!ARRAY_INDEX.test(segment)) return undefined;
      current = current[Number(segment)];
    } else {
      if (!Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

function readerFor(field: string): Reader {
  switch (field) {
    case 'inputContext.prompt':
      return (t) => t.inputContext.prompt;
    case 'inputContext.systemPrompt':
      return (t) => t.inputContext.systemPrompt;
    case 'outputDecision.text':
      return (t) => t.outputDecision.text;
    case 'outputDecision.action':
      return (t) => t.outputDecision.action;
    case 'confidence':
      return (t) => t.confidence;
    case 'agentId':
      return (t) => t.agentId;
    case 'toolCalls.name':
      // An array value gets any-element semantics in the evaluator; no names at all reads as missing.
      return (t) => {
        const names = (t.outputDecision.toolCalls ?? [])
          .map((c) => c?.name)
          .filter((n) => typeof n === 'string');
        return names.length > 0 ? names : undefined;
      };
  }
  const segments = parseMetadataPath(field);
  if (!segments) throw new Error(`unvalidated field ${field}`);
  return (t) => readPath(t.metadata, segments);
}

/** Lower-cases each distinct text once per trace, however many `contains` conditions look at it. */
function lowered(text: string, scratch: EvaluationScratch): string {
  let low = scratch.lowered.get(text);
  if (low === undefined) {
    low = text.toLowerCase();
    scratch.lowered.set(text, low);
  }
  return low;
}

/**
 * `containsPii`: the types of `entities` found in the text at `minScore` or above, asked once per trace and distinct
 * question (types and score) whichever policies ask it, and noted in the scratch for the policy's result.
 */
function piiPredicate(entities: readonly PiiEntity[], minScore: number): Predicate {
  const wanted = new Set(entities);
  const question = `${[...wanted].sort().join(',')}@${minScore}`;
  return (v, s) => {
    if (typeof v !== 'string') return false;
    let answers = s.pii.get(question);
    if (!answers) s.pii.set(question, (answers = new Map()));
    let found = answers.get(v);
    if (found === undefined) answers.set(v, (found = piiTypesIn(v, wanted, minScore)));
    for (const type of found) s.piiHits.add(type);
    return found.length > 0;
  };
}

function predicateFor(condition: PolicyCondition): Predicate {
  const { operator, value } = condition;
  switch (operator) {
    case 'containsPii':
      return piiPredicate(value as PiiEntity[], condition.minScore ?? DEFAULT_MIN_SCORE);
    case 'equals':
    case 'not_equals':
      return (v) => v === value;
    case 'contains':
    case 'not_contains': {
      const needle = (value as string).toLowerCase();
      return (v, s) => typeof v === 'string' && lowered(v, s).includes(needle);
    }
    case 'matches': {
      const re = compilePattern(value as string) as RE2JS; // once per policy, reused for every trace
      return (v) => typeof v === 'string' && re.test(v);
    }
    case 'in':
    case 'not_in': {
      const set = new Set<unknown>(value as readonly (string | number)[]);
      return (v) => set.has(v);
    }
    case 'gt':
      return (v) => typeof v === 'number' && v > (value as number);
    case 'gte':
      return (v) => typeof v === 'number' && v >= (value as number);
    case 'lt':
      return (v) => typeof v === 'number' && v < (value as number);
    case 'lte':
      return (v) => typeof v === 'number' && v <= (value as number);
    default:
      throw new Error(`no predicate for ${operator}`);
  }
}

const isMissing = (v: unknown): boolean => v === undefined || v === null;

function compileCondition(condition: PolicyCondition): CompiledCondition {
  const { field, operator } = condition;
  const read = readerFor(field);
  if (operator === 'exists') return { field, operator, test: (t) => !isMissing(read(t)) };
  if (operator === 'not_exists') return { field, operator, test: (t) => isMissing(read(t)) };
  const holds = predicateFor(condition);
  const negated = operator === 'not_equals' || operator === 'not_contains' || operator === 'not_in';
  const test = (t: TraceFacts, s: EvaluationScratch): boolean => {
    const v = read(t);
    // Every operator but exists / not_exists is false on a missing field, negated ones included.
    if (isMissing(v)) return false;
    if (Array.isArray(v)) {
      // Any element satisfies a positive operator; a negated one holds when no element satisfies it.
      if (v.length === 0) return false;
      const some = v.some((e) => holds(e, s));
      return negated ? !some : some;
    }
    return negated ? !holds(v, s) : holds(v, s);
  };
  return { field, operator, test };
}

/**
 * Validates a policy and turns it into the form `evaluate` runs: field readers and RE2 programs are built
 * here, once per policy, never per trace. Throws InvalidPolicyError with 400-ready details.
 */
export function compile(policy: PolicyInput): CompiledPolicy {
  const errors = validateConditions(policy.conditions);
  const match = policy.match ?? POLICY_DEFAULTS.match;
  const agentIds = policy.agentIds ?? POLICY_DEFAULTS.agentIds;
  const priority = policy.priority ?? POLICY_DEFAULTS.priority;
  if (!POLICY_OUTCOMES.includes(policy.outcome))
    errors.push({ field: 'outcome', message: 'must be block or flag' });
  if (!POLICY_MATCH_MODES.includes(match)) errors.push({ field: 'match', message: 'must be all or any' });
  if (!Number.isFinite(priority)) errors.push({ field: 'priority', message: 'must be a finite number' });
  if (!Array.isArray(agentIds) || agentIds.some((a) => typeof a !== 'string')) {
    errors.push({ field: 'agentIds', message: 'must be an array of strings' });
  }
  if (errors.length > 0) throw new InvalidPolicyError(errors);
  return {
    id: policy.id,
    name: policy.name,
    outcome: policy.outcome,
    match,
    agentIds: agentIds.length > 0 ? new Set(agentIds) : null,
    priority,
    isActive: policy.isActive ?? POLICY_DEFAULTS.isActive,
    conditions: policy.conditions.map(compileCondition),
  };
}
