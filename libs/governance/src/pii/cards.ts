/**
 * Payment card numbers (PAN): 12 to 19 digits, compact or in groups of 3–6 joined by single spaces or single dashes
 * (one kind throughout), with an issuer's prefix and one of its lengths, and a valid Luhn check digit.
 */
import { CH_DASH, CH_SPACE, rightClear } from './chars.js';
import { luhnValid } from './checksums.js';
import type { DigitRun } from './digits.js';
import { ENTITY_BIT } from './entities.js';
import { type Sink, valueMayStart } from './sink.js';

/** Grouped as cards are printed (4-4-4-4, 4-6-5): a card beyond reasonable doubt. */
export const CARD_GROUPED_SCORE = 0.9;
/** Compact: Luhn and an issuer prefix leave about one random number in 20 of the right length. */
export const CARD_COMPACT_SCORE = 0.8;
/** A compact 13-digit (Visa) or 14-digit (Diners Club) number. */
export const CARD_LEGACY_SCORE = 0.45;
const BIT = ENTITY_BIT.creditCard;

function prefix(d: ArrayLike<number>, len: number): number {
  let v = 0;
  for (let i = 0; i < len; i++) v = v * 10 + d[i]!;
  return v;
}

/**
 * Whether the first digits name an issuer that issues cards of `n` digits: Visa (4; 13, 16, 19), Mastercard (51–55,
 * 2221–2720; 16), American Express (34, 37; 15), Discover (6011, 644–649, 65, 622126–622925; 16–19), JCB (3528–3589;
 * 16–19), Diners Club (300–305, 3095, 36, 38, 39; 14–19), UnionPay (62; 16–19), Maestro (5018, 5020, 5038, 5893,
 * 6304, 6759, 6761–6763; 12–19), Mir (2200–2204; 16–19).
 */
export function cardIssuerAccepts(d: ArrayLike<number>, n: number): boolean {
  const p1 = d[0]!;
  const p2 = prefix(d, 2);
  const p3 = prefix(d, 3);
  const p4 = prefix(d, 4);
  if (p1 === 4) return n === 13 || n === 16 || n === 19;
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16;
  if (p2 === 34 || p2 === 37) return n === 15;
  const long = n >= 16 && n <= 19;
  if (p4 === 6011 || (p3 >= 644 && p3 <= 649) || p2 === 65) return long;
  if (p4 >= 3528 && p4 <= 3589) return long;
  if (p2 === 62) return long; // UnionPay, with Discover's co-branded 622126–622925
  if ((p3 >= 300 && p3 <= 305) || p4 === 3095 || p2 === 36 || p2 === 38 || p2 === 39)
    return n >= 14 && n <= 19;
  if (p4 >= 2200 && p4 <= 2204) return long;
  if ([5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763].includes(p4)) return n >= 12 && n <= 19;
  return false;
}

/** Detects a card number that is the whole digit run. */
export function detectCard(text: string, run: DigitRun, sink: Sink): void {
  const n = run.count;
  if (n < 12 || n > 19) return;
  if (run.groupCount > 1) {
    if (run.separator !== CH_SPACE && run.separator !== CH_DASH) return;
    for (let g = 0; g < run.groupCount; g++) {
      const size = run.groupSizes[g]!;
      if (size < 3 || size > 6) return;
    }
  }
  if (!cardIssuerAccepts(run.digits, n) || !luhnValid(run.digits, n)) return;
  if (!valueMayStart(text, run.start, sink) || !rightClear(text, run.end)) return;
  // Compact 13 or 14 digits: Visa's and Diners Club's old lengths, seldom issued now, and those of EAN-13 barcodes
  // and parcel numbers: a label must say it is a card.
  const base =
    run.groupCount > 1 ? CARD_GROUPED_SCORE : n === 13 || n === 14 ? CARD_LEGACY_SCORE : CARD_COMPACT_SCORE;
  const score = sink.score(BIT, run.start, run.end, base);
  if (score >= sink.minScore) sink.add('creditCard', run.start, run.end, score);
}
