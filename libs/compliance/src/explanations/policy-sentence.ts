import {
  type PolicyCondition,
  type PolicyMatchMode,
  POLICY_TEMPLATES,
  RETIRED_TEMPLATE_PATTERNS,
} from '#governance';

/**
 * A policy's conditions in plain English, for the person a decision concerns (GET /traces/:id/explanation): pure,
 * from the stored conditions alone, so that nothing is said that the records do not hold. See
 * docs/compliance-officers.md, "Explaining a decision (art. 86)"; policy-sentence.spec.ts.
 */

/** What each field of a condition is, as the person concerned would call it. */
const FIELD_NAMES: Readonly<Record<string, string>> = {
  'inputContext.prompt': 'the request',
  'inputContext.systemPrompt': 'the system prompt (the instructions given to the system)',
  'outputDecision.text': 'the output',
  'outputDecision.action': 'the action decided',
  'toolCalls.name': 'the name of a tool the system used',
  confidence: 'the system’s confidence in its decision',
};

/** What the patterns of the policy templates look for; a policy made from a template keeps its pattern. */
const TEMPLATE_PATTERN_MEANINGS: Readonly<Record<string, string>> = {
  'email-in-output': 'an e-mail address',
  'payment-card-in-output': 'a payment-card number',
  'national-id-in-output': 'a US Social Security number',
  'secret-in-output': 'a password, key or other secret credential',
  'destructive-tool-call': 'a word for a destructive action (such as delete, drop or shutdown)',
  'prompt-injection':
    'a phrase trying to override the system’s instructions (such as “ignore previous instructions”)',
};

/**
 * Each template's `matches` pattern, today's and retired ones, by its text: the same pattern means the same thing
 * whatever the policy.
 */
const KNOWN_PATTERNS: ReadonlyMap<string, string> = new Map([
  ...POLICY_TEMPLATES.flatMap((template) =>
    template.conditions
      .filter((c) => c.operator === 'matches' && typeof c.value === 'string')
      .flatMap((c) => {
        const meaning = TEMPLATE_PATTERN_MEANINGS[template.id];
        return meaning ? [[c.value as string, meaning] as const] : [];
      }),
  ),
  ...Object.entries(RETIRED_TEMPLATE_PATTERNS).flatMap(([id, patterns]) =>
    patterns.map((pattern) => [pattern, TEMPLATE_PATTERN_MEANINGS[id]!] as const),
  ),
]);

/** The kinds of personal data a `containsPii` condition names (contract-decisions §19). */
const PII_NAMES: Readonly<Record<string, string>> = {
  email: 'an e-mail address',
  phone: 'a phone number',
  creditCard: 'a payment-card number',
  iban: 'a bank account number (IBAN)',
  ipAddress: 'an IP address',
  usSsn: 'a US Social Security number',
  ukNino: 'a UK National Insurance number',
  deTaxId: 'a German tax identification number',
  frNir: 'a French social security number',
  esDni: 'a Spanish national identity number (DNI)',
  itFiscalCode: 'an Italian fiscal code',
  nlBsn: 'a Dutch citizen service number (BSN)',
  plPesel: 'a Polish PESEL number',
};

/** A quoted value, shortened past this many characters. */
const MAX_QUOTED = 120;

const quote = (value: string): string =>
  `“${value.length > MAX_QUOTED ? `${value.slice(0, MAX_QUOTED)}…` : value}”`;

/** "a", "a or b", "a, b or c" (`and` for a list of things that were all found). */
export function listOf(items: readonly string[], conjunction: 'and' | 'or'): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} ${conjunction} ${items[items.length - 1]}`;
}

/** 0.5 → "50%", 0.725 → "72.5%". */
export const percent = (value: number): string => `${Number((value * 100).toFixed(1))}%`;

function fieldName(field: string): string {
  if (field.startsWith('metadata.')) return `the recorded detail ${quote(field.slice('metadata.'.length))}`;
  return FIELD_NAMES[field] ?? `the field ${quote(field)}`;
}

function valueText(field: string, value: unknown): string {
  if (field === 'confidence' && typeof value === 'number') return percent(value);
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return quote(JSON.stringify(value) ?? '');
}

function valuesText(field: string, value: unknown): string {
  const values = Array.isArray(value) ? value : [value];
  return values.map((v) => valueText(field, v)).join(', ');
}

function piiText(value: unknown, found: readonly string[] | undefined): string {
  const named = Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  // What the match found is preferred to what the condition looked for: it is the stored fact about this decision.
  const kinds = found?.length ? found : named;
  const nouns = kinds.map((k) => PII_NAMES[k] ?? quote(k));
  return found?.length ? listOf(nouns, 'and') : listOf(nouns, 'or');
}

/** Whether the condition is about the agent itself, which the person knows as "the system". */
function agentCondition(condition: PolicyCondition): string | null {
  if (condition.field !== 'agentId') return null;
  if (condition.operator === 'equals' || condition.operator === 'in')
    return 'the decision was made by an AI system this rule names';
  if (condition.operator === 'not_equals' || condition.operator === 'not_in')
    return 'the decision was made by an AI system this rule does not exclude';
  return 'the decision was made by an AI system this rule covers';
}

/**
 * One condition as a clause (lower case, no full stop): `{field: 'outputDecision.text', operator: 'matches', value:
 * <the e-mail template's pattern>}` → "the output contained an e-mail address". `piiEntities`: the kinds of personal
 * data the match found, when the policy result stored them.
 */
export function conditionClause(condition: PolicyCondition, piiEntities?: readonly string[]): string {
  const about = agentCondition(condition);
  if (about) return about;
  const { field, value } = condition;
  const subject = fieldName(field);
  // Read as a string: operators may be added to the engine (containsPii) before this renderer knows them all.
  const operator: string = condition.operator;
  switch (operator) {
    case 'equals':
      return `${subject} was ${valueText(field, value)}`;
    case 'not_equals':
      return `${subject} was not ${valueText(field, value)}`;
    case 'contains':
      return `${subject} contained ${valueText(field, value)}`;
    case 'not_contains':
      return `${subject} did not contain ${valueText(field, value)}`;
    case 'matches': {
      const known = typeof value === 'string' ? KNOWN_PATTERNS.get(value) : undefined;
      return known
        ? `${subject} contained ${known}`
        : `${subject} matched a text pattern set by the organization (${valueText(field, value)})`;
    }
    case 'in':
      return `${subject} was one of ${valuesText(field, value)}`;
    case 'not_in':
      return `${subject} was none of ${valuesText(field, value)}`;
    case 'gt':
      return `${subject} was above ${valueText(field, value)}`;
    case 'gte':
      return `${subject} was ${valueText(field, value)} or more`;
    case 'lt':
      return `${subject} was below ${valueText(field, value)}`;
    case 'lte':
      return `${subject} was ${valueText(field, value)} or less`;
    case 'exists':
      return field === 'toolCalls.name' ? 'the system used a tool' : `${subject} was present`;
    case 'not_exists':
      return field === 'toolCalls.name' ? 'the system used no tool' : `${subject} was absent`;
    case 'containsPii':
      return `${subject} contained ${piiText(value, piiEntities)}`;
    default:
      return `${subject} met the condition ${quote(operator)}${value === undefined ? '' : ` ${valueText(field, value)}`}`;
  }
}

const sentence = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;

/**
 * A policy's conditions as one sentence: every condition of an `all` policy joined by "and"; for an `any` policy,
 * which condition held is not recorded, so the sentence says that at least one did.
 */
export function conditionsSentence(
  conditions: readonly PolicyCondition[],
  match: PolicyMatchMode,
  piiEntities?: readonly string[],
): string {
  const clauses = conditions.map((c) => conditionClause(c, piiEntities));
  if (clauses.length === 0) return 'The rule applies to every decision of the systems it covers.';
  if (clauses.length === 1 || match === 'all') return sentence(listOf(clauses, 'and'));
  return `At least one of these was true: ${clauses.join('; ')}.`;
}

/** What is stored about one policy that matched the decision, and the policy as it is now, if it still exists. */
export interface PolicyMatchFacts {
  /** From the trace's `policyResults`: what the match recorded. */
  result: { policyId: string; name: string; outcome: 'block' | 'flag'; piiEntities?: readonly string[] };
  /** The policy as stored now; undefined once deleted. */
  policy?: { conditions: readonly PolicyCondition[]; match: PolicyMatchMode; updatedAt: Date };
  /** When the decision was made. */
  decidedAt: Date;
}

/**
 * The explanation of one matched policy. The trace records which policy matched (its id, name and outcome) but not
 * its conditions, so they are read from the policy as it is now, and the sentence says so when the policy was
 * edited after the decision, or cannot be read because it was deleted.
 */
export function explainPolicyMatch(facts: PolicyMatchFacts): string {
  if (!facts.policy) {
    return 'The organization has since deleted this rule, so its conditions can no longer be shown.';
  }
  const text = conditionsSentence(facts.policy.conditions, facts.policy.match, facts.result.piiEntities);
  if (facts.policy.updatedAt.getTime() <= facts.decidedAt.getTime()) return text;
  return (
    `${text} (The organization edited this rule after the decision: these are its conditions now, which may ` +
    'differ from those applied then.)'
  );
}
