import type { PolicyCondition, PolicyOutcome } from './condition.js';

/**
 * A pre-built policy served by `GET /policies/templates` (docs/agent-builders.md, "Decision pipeline";
 * templates.spec.ts); match is always `all`.
 */
export interface PolicyTemplate {
  /** Stable kebab-case id: stored as a policy's `templateId`, so it must never change once shipped. */
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly outcome: PolicyOutcome;
  readonly conditions: readonly PolicyCondition[];
}

// Personal data is found by the PII detectors (`containsPii`: checksums and issuer rules, not patterns). The other
// patterns are RE2 and run case-insensitive (the engine adds the flag), so they hold lower-case classes only where
// case does not matter. String.raw keeps the backslashes readable.

/**
 * OpenAI / Anthropic style `sk-` keys (a run of 20 alphanumerics, so `sk-learn-…` slugs do not match), Stripe
 * secret and restricted keys, AWS access key ids, GitHub tokens, Slack tokens, PEM private keys, and this
 * service's own workspace (`svc_live_`) and agent (`svc_agent_`) keys.
 */
const SECRET =
  String.raw`\bsk-[a-z0-9_-]*[a-z0-9]{20}` +
  String.raw`|\b[sr]k_(?:live|test)_[a-z0-9]{16,}` +
  String.raw`|\bAKIA[0-9A-Z]{16}\b` +
  String.raw`|\bgh[pousr]_[a-z0-9]{36}\b` +
  String.raw`|\bxox[abprs]-[a-z0-9-]{10,}` +
  String.raw`|-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----` +
  String.raw`|\bsvc_(?:live|agent)_[a-z0-9_-]{32,}`;

/**
 * A destructive verb as a word of the tool name, split on `_ . - / :` or the start. Long verbs may run on
 * into camelCase (`deleteUser`; the case-insensitive flag cannot see case changes); short ones need a
 * boundary after them so `dropdown_select` and `skill_lookup` do not match.
 */
const DESTRUCTIVE_TOOL =
  String.raw`(?:^|[^a-z0-9])(?:delete|destroy|truncate|terminate|purge|wipe|erase|shutdown` +
  String.raw`|(?:drop|rm|rmdir|kill|mkfs)(?:[^a-z0-9]|$))`;

const PROMPT_INJECTION =
  String.raw`(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:(?:of\s+)?(?:the|your|my)\s+)?` +
  String.raw`(?:previous|prior|above|earlier|preceding|system)\s+(?:instructions|prompts?|rules|directions|messages)` +
  String.raw`|disregard\s+all\s+prior` +
  String.raw`|you\s+are\s+now\s+(?:dan|in\s+developer\s+mode)` +
  String.raw`|\bdo\s+anything\s+now\b` +
  String.raw`|(?:reveal|show|print|repeat|output|leak)\s+(?:me\s+)?(?:your|the)\s+` +
  String.raw`(?:system\s+prompt|hidden\s+instructions|initial\s+instructions)`;

export const POLICY_TEMPLATES: readonly PolicyTemplate[] = Object.freeze([
  {
    id: 'email-in-output',
    name: 'E-mail address in output',
    description: 'Flags a trace whose output text contains an e-mail address (personal data).',
    outcome: 'flag',
    conditions: [{ field: 'outputDecision.text', operator: 'containsPii', value: ['email'] }],
  },
  {
    id: 'payment-card-in-output',
    name: 'Payment-card number in output',
    description:
      'Blocks output containing a payment-card number (Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay, ' +
      'Maestro), with or without spaces or dashes, that passes the Luhn checksum and fits its issuer’s prefix and ' +
      'length: a 16-digit order number that fails the checksum passes.',
    outcome: 'block',
    conditions: [{ field: 'outputDecision.text', operator: 'containsPii', value: ['creditCard'] }],
  },
  {
    id: 'national-id-in-output',
    name: 'National id number in output',
    description:
      'Blocks output containing a national identifier that passes its check rule: US SSN, UK National Insurance ' +
      'number, German tax id, French NIR, Spanish DNI or NIE, Italian codice fiscale, Dutch BSN, Polish PESEL.',
    outcome: 'block',
    conditions: [
      {
        field: 'outputDecision.text',
        operator: 'containsPii',
        value: ['usSsn', 'ukNino', 'deTaxId', 'frNir', 'esDni', 'itFiscalCode', 'nlBsn', 'plPesel'],
      },
    ],
  },
  {
    id: 'bank-account-in-output',
    name: 'Bank account (IBAN) in output',
    description: 'Flags output containing an IBAN whose ISO 13616 check digits and country length are right.',
    outcome: 'flag',
    conditions: [{ field: 'outputDecision.text', operator: 'containsPii', value: ['iban'] }],
  },
  {
    id: 'secret-in-output',
    name: 'Secret or API key in output',
    description:
      'Blocks output containing a credential: sk- API keys, Stripe sk_live_/rk_live_ keys, AWS AKIA access ' +
      'key ids, GitHub ghp_/gho_/ghs_ tokens, Slack xox tokens, PEM private keys, svc_live_ and svc_agent_ keys.',
    outcome: 'block',
    conditions: [{ field: 'outputDecision.text', operator: 'matches', value: SECRET }],
  },
  {
    id: 'low-confidence',
    name: 'Low confidence',
    description: 'Flags a trace whose confidence is below 0.5 for human review.',
    outcome: 'flag',
    conditions: [{ field: 'confidence', operator: 'lt', value: 0.5 }],
  },
  {
    id: 'destructive-tool-call',
    name: 'Destructive tool call',
    description:
      'Flags for human approval a trace that calls a tool named for a destructive action (delete, drop, rm, ' +
      'truncate, shutdown, destroy, purge, wipe, kill, terminate …). Flag rather than block: such calls are ' +
      'often legitimate and need a human decision; change the outcome to block to refuse them outright.',
    outcome: 'flag',
    conditions: [{ field: 'toolCalls.name', operator: 'matches', value: DESTRUCTIVE_TOOL }],
  },
  {
    id: 'prompt-injection',
    name: 'Prompt-injection phrases',
    description:
      'Flags a prompt containing a known injection phrase: "ignore previous instructions", "disregard all ' +
      'prior", "you are now DAN", "reveal your system prompt" and close variants. Phrase matching catches ' +
      'common attempts only, not paraphrases.',
    outcome: 'flag',
    conditions: [{ field: 'inputContext.prompt', operator: 'matches', value: PROMPT_INJECTION }],
  },
]);

/**
 * The RE2 patterns the personal-data templates held before they used `containsPii`, by template id. Policies made
 * from them keep their pattern (a template is copied, not referenced), so the explanation of a decision still reads
 * these as what they looked for.
 */
export const RETIRED_TEMPLATE_PATTERNS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  'email-in-output': [String.raw`[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}`],
  'payment-card-in-output': [
    String.raw`\b(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|6011|65\d{2})(?:[ -]?\d{4}){3}\b` +
      String.raw`|\b3[47]\d{2}[ -]?\d{6}[ -]?\d{5}\b`,
  ],
  'national-id-in-output': [
    String.raw`\b(?:00[1-9]|0[1-9]\d|[1-578]\d{2}|6[0-57-9]\d|66[0-57-9])` +
      String.raw`-(?:0[1-9]|[1-9]\d)-(?:000[1-9]|00[1-9]\d|0[1-9]\d{2}|[1-9]\d{3})\b`,
  ],
});

export function findPolicyTemplate(id: string): PolicyTemplate | undefined {
  return POLICY_TEMPLATES.find((t) => t.id === id);
}
