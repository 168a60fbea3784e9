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

// Patterns are RE2 and run case-insensitive (the engine adds the flag), so they hold lower-case classes only
// where case does not matter. String.raw keeps the backslashes readable.

const EMAIL = String.raw`[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}`;

/** Visa, Mastercard (51-55 and 2221-2720 ranges, loosely), Discover 16 digits; Amex 15 in 4-6-5 groups. */
const PAYMENT_CARD =
  String.raw`\b(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|6011|65\d{2})(?:[ -]?\d{4}){3}\b` +
  String.raw`|\b3[47]\d{2}[ -]?\d{6}[ -]?\d{5}\b`;

/** Dashed SSN; area 000, 666 and 900-999, group 00 and serial 0000 are never issued, so they are left out. */
const US_SSN =
  String.raw`\b(?:00[1-9]|0[1-9]\d|[1-578]\d{2}|6[0-57-9]\d|66[0-57-9])` +
  String.raw`-(?:0[1-9]|[1-9]\d)-(?:000[1-9]|00[1-9]\d|0[1-9]\d{2}|[1-9]\d{3})\b`;

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
    conditions: [{ field: 'outputDecision.text', operator: 'matches', value: EMAIL }],
  },
  {
    id: 'payment-card-in-output',
    name: 'Payment-card number in output',
    description:
      'Blocks output containing a Visa, Mastercard, Discover or Amex card number, with or without spaces or ' +
      'dashes. Pattern only: no Luhn checksum is applied, so a well-formed invalid number also matches.',
    outcome: 'block',
    conditions: [{ field: 'outputDecision.text', operator: 'matches', value: PAYMENT_CARD }],
  },
  {
    id: 'national-id-in-output',
    name: 'National id number in output (US SSN)',
    description:
      'Blocks output containing a US Social Security number written as 123-45-6789, skipping ranges that are ' +
      'never issued. Other countries need their own pattern.',
    outcome: 'block',
    conditions: [{ field: 'outputDecision.text', operator: 'matches', value: US_SSN }],
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

export function findPolicyTemplate(id: string): PolicyTemplate | undefined {
  return POLICY_TEMPLATES.find((t) => t.id === id);
}
