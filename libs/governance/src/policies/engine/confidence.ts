/**
 * Confidence of a trace whose body has none. Computed before policies run, so a
 * `confidence lt 0.5` policy sees this value.
 * See docs/agent-builders.md, "Decision pipeline"; confidence.spec.ts.
 */

export const HEDGING_PHRASES = [
  "i'm not sure",
  'i am not sure',
  'i think',
  'possibly',
  'might be',
  'cannot be certain',
] as const;

export const REFUSAL_PHRASES = ["i can't help", 'i cannot help', "i'm unable"] as const;

// Arithmetic is in hundredths so the result is exact (0.9 - 0.45 in floating point is 0.45000000000000007).
const START = 90;
const EMPTY_PENALTY = 30;
const HEDGE_PENALTY = 15;
const MAX_HEDGE_PENALTY = 45;
const REFUSAL_PENALTY = 20;

/**
 * A phrase counts only as whole words: "possibly" is not found in "impossibly", nor "i think" in
 * "hawaii thinks". Letters and digits of any script count as word characters.
 */
function phrasePattern(phrase: string): RegExp {
  const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'u');
}

// Built once at load; fixed literal phrases, so no backtracking risk on long outputs.
const HEDGES = HEDGING_PHRASES.map(phrasePattern);
const REFUSALS = REFUSAL_PHRASES.map(phrasePattern);

/**
 * Starts at 0.9; -0.3 for empty (or whitespace-only) output text; -0.15 for each distinct hedging phrase
 * found (a phrase repeated counts once), at most -0.45; -0.2 once if any refusal phrase is found; clamped
 * to 0..1 with two decimals. Matching is case-insensitive and treats a typographic apostrophe (’) as '.
 */
export function estimateConfidence(outputText: string): number {
  const text = (outputText ?? '').toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'");
  let score = START;
  if (text.trim() === '') score -= EMPTY_PENALTY;
  const hedges = HEDGES.filter((re) => re.test(text)).length;
  score -= Math.min(hedges * HEDGE_PENALTY, MAX_HEDGE_PENALTY);
  if (REFUSALS.some((re) => re.test(text))) score -= REFUSAL_PENALTY;
  return Math.min(100, Math.max(0, score)) / 100;
}
