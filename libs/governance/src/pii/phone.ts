/**
 * Phone numbers: a linear scan finds the candidate span (a leading `+` or `(`, digits, single separators `-./ `,
 * parentheses; at most 24 characters and 7–15 dialled digits), then libphonenumber-js validates it with its full
 * ("max") metadata, which checks each number type's pattern (fixed line, mobile, …) and not only the country's general
 * one: about 70 % of random German 10-digit numbers pass it against 90 % with the "min" metadata. Validation is the
 * costly step (4–15 µs a call), so it runs last, once the span's shape and its context can reach the threshold.
 *
 * A number with `+` (or `00`) is validated as it is. A national one (no `+`) has no country, and the API has no
 * language hint: it is tried against the numbering plans of the service's markets that fit its leading digit and
 * length (trunk `0`: DE, FR, GB, NL, IT, BE, AT, CH, IE; nine digits: ES, PL; ten: US, IT mobiles; `1` + ten: US), the
 * trunk prefix removed as each plan prescribes, and taken when one of them accepts it. Printed shapes that are not
 * phone numbers are refused before: dotted groups other than pairs or 3-3-4 (versions), the digit groups after an
 * IBAN's bank code, national numbers without a trunk 0 whose first group is not of 2 or 3 digits.
 */
import { PhoneNumber } from 'libphonenumber-js/max';
import {
  CH_CLOSE,
  CH_DOT,
  CH_OPEN,
  CH_PLUS,
  CH_SPACE,
  isAsciiAlnum,
  isDigit,
  isJoiner,
  rightClear,
} from './chars.js';
import { ENTITY_BIT } from './entities.js';
import { type Sink, valueMayStart } from './sink.js';

/** `+49 30 1234567`, `0049 ...`: the country is written. */
export const PHONE_INTERNATIONAL_SCORE = 0.7;
/** `030 1234567`, `(415) 555-2671`: national, with the grouping people print. */
export const PHONE_FORMATTED_SCORE = 0.55;
/** `0301234567`: national and unseparated, as often an order or customer number: needs a context word. */
export const PHONE_COMPACT_SCORE = 0.35;

const MAX_SPAN = 24;
const MAX_DIGITS = 17;
const BIT = ENTITY_BIT.phone;

/** A numbering plan to try a national number against: its calling code and whether a leading 0 is a trunk prefix. */
interface Plan {
  readonly callingCode: string;
  readonly trunkZero: boolean;
}

const PLAN = {
  DE: { callingCode: '49', trunkZero: true },
  FR: { callingCode: '33', trunkZero: true },
  GB: { callingCode: '44', trunkZero: true },
  NL: { callingCode: '31', trunkZero: true },
  BE: { callingCode: '32', trunkZero: true },
  AT: { callingCode: '43', trunkZero: true },
  CH: { callingCode: '41', trunkZero: true },
  // Italian numbers keep their leading 0: it is part of the number, not a trunk prefix.
  IT: { callingCode: '39', trunkZero: false },
  ES: { callingCode: '34', trunkZero: false },
  PL: { callingCode: '48', trunkZero: false },
  IE: { callingCode: '353', trunkZero: true },
  US: { callingCode: '1', trunkZero: false },
} satisfies Record<string, Plan>;

/** Plans for a national number starting with 0, by its digit count (trunk included); the likeliest first. */
function trunkPlans(digits: number, pairs: boolean): readonly Plan[] {
  if (digits === 10) {
    return pairs
      ? [PLAN.FR, PLAN.NL, PLAN.BE, PLAN.DE, PLAN.IT, PLAN.CH, PLAN.AT, PLAN.GB, PLAN.IE]
      : [PLAN.NL, PLAN.DE, PLAN.FR, PLAN.IT, PLAN.CH, PLAN.BE, PLAN.AT, PLAN.GB, PLAN.IE];
  }
  if (digits === 11) return [PLAN.GB, PLAN.DE, PLAN.IT, PLAN.AT];
  if (digits === 9) return [PLAN.BE, PLAN.DE, PLAN.IT, PLAN.AT, PLAN.IE];
  return [PLAN.DE, PLAN.AT, PLAN.IT];
}

const NO_PLANS: readonly Plan[] = [];
const US_ONLY: readonly Plan[] = [PLAN.US];

/** The plans to try a national number of `digits` digits against, by its first digit; empty when none fits. */
function nationalPlans(digits: number, first: number, pairs: boolean): readonly Plan[] {
  if (digits < 9 || digits > 13) return NO_PLANS;
  if (first === 0) return trunkPlans(digits, pairs);
  if (first === 1 && digits === 11) return US_ONLY;
  return plainPlans(digits, first);
}

/** Plans for a national number without a trunk prefix. */
function plainPlans(digits: number, first: number): readonly Plan[] {
  if (digits === 9) return first >= 6 ? [PLAN.ES, PLAN.PL] : [PLAN.PL];
  if (digits === 10 && first >= 2) return first === 3 ? [PLAN.IT, PLAN.US] : US_ONLY;
  return NO_PLANS;
}

function isValidE164(e164: string): boolean {
  try {
    return new PhoneNumber(e164 as `+${string}`).isValid();
  } catch {
    return false; // too short or an unknown calling code
  }
}

/**
 * Numbering-plan checks (one libphonenumber-js validation each, 4–15 µs; a national number may need one per plan
 * that fits it) that one call may make: a detection, a masked text or a masked JSON value. Far above what a text
 * with a few hundred phone numbers needs, it bounds the cost of a megabyte of them (≈ 2 s without it). Beyond it, a
 * candidate that passed its shape and score checks is reported unchecked: the scan errs towards masking too much.
 */
export const PHONE_CHECK_BUDGET = 4096;
/** Digit strings whose result a call remembers (a text that repeats one number validates it once). */
const PHONE_MEMO_MAX = 1024;

/** The phone validations of one call: the checks left, and the results by digit string (made on first use). */
export interface PhoneChecks {
  left: number;
  memo: Map<string, string | null> | null;
}

export function phoneChecks(): PhoneChecks {
  return { left: PHONE_CHECK_BUDGET, memo: null };
}

/**
 * The E.164 form of a phone number as printed (`+49 30 1234567`, `030 1234567`, `(415) 555-2671`), or null when no
 * plan accepts it (or, with `checks`, when their budget is spent). The same plans in the same order as detection, so
 * a detected value normalizes the same way.
 */
export function phoneToE164(printed: string, checks?: PhoneChecks): string | null {
  const plus = printed.startsWith('+');
  const source = plus ? printed.replace('(0)', '') : printed;
  let digits = '';
  let groups = 0;
  let pairGroups = 0;
  let run = 0;
  for (let i = 0; i <= source.length; i++) {
    if (i < source.length && isDigit(source.charCodeAt(i))) {
      digits += source[i];
      run++;
    } else if (run > 0) {
      groups++;
      if (run === 2) pairGroups++;
      run = 0;
    }
  }
  const pairs = groups === 5 && pairGroups === 5;
  return (checks ? e164Checked(checks, plus, digits, pairs) : e164Of(plus, digits, pairs, null)) ?? null;
}

/** The E.164 form, null when no plan accepts it, undefined when the checks' budget ran out first. */
function e164Of(
  plus: boolean,
  digits: string,
  pairs: boolean,
  checks: PhoneChecks | null,
): string | null | undefined {
  let d = digits;
  const international = plus || d.startsWith('00');
  if (international) {
    if (!plus) d = d.slice(2);
    if (d.length < 7 || d.length > 15) return null;
    if (checks !== null && checks.left-- <= 0) return undefined;
    const e164 = '+' + d;
    return isValidE164(e164) ? e164 : null;
  }
  for (const plan of nationalPlans(d.length, d.charCodeAt(0) - 48, pairs)) {
    if (checks !== null && checks.left-- <= 0) return undefined;
    const national = plan.trunkZero || (plan === PLAN.US && d.length === 11) ? d.slice(1) : d;
    const e164 = '+' + plan.callingCode + national;
    if (isValidE164(e164)) return e164;
  }
  return null;
}

/** `e164Of` within a call's budget, remembering its results. */
function e164Checked(
  checks: PhoneChecks,
  plus: boolean,
  digits: string,
  pairs: boolean,
): string | null | undefined {
  const key = (plus ? '+' : pairs ? ':' : '') + digits;
  const known = checks.memo?.get(key);
  if (known !== undefined) return known;
  const e164 = e164Of(plus, digits, pairs, checks);
  if (e164 !== undefined && (checks.memo ??= new Map()).size < PHONE_MEMO_MAX) checks.memo.set(key, e164);
  return e164;
}

/** Whether four letters or digits and a space or line break stand right before `start` (an IBAN's previous group). */
function isIbanGroupBefore(text: string, start: number): boolean {
  const sep = text.charCodeAt(start - 1);
  if ((sep !== CH_SPACE && sep !== 0x0a) || start < 5) return false;
  for (let k = start - 5; k < start - 1; k++) if (!isAsciiAlnum(text.charCodeAt(k))) return false;
  return start === 5 || !isAsciiAlnum(text.charCodeAt(start - 6));
}

/**
 * Detects a phone number starting at `start` (a `+`, a `(` or the first digit of a run that does not continue an
 * earlier one, or that the scanner reads again after a number: `sink.clearStart`). Bounded: reads at most MAX_SPAN
 * characters.
 */
export function detectPhone(text: string, start: number, sink: Sink): void {
  const n = text.length;
  const limit = Math.min(n, start + MAX_SPAN);
  let i = start;
  const plus = text.charCodeAt(i) === CH_PLUS;
  if (plus) i++;
  let count = 0;
  let firstGroup = 0;
  let groups = 0;
  let fours = 0;
  let dots = 0;
  let otherSeparators = 0;
  let shortGroups = 0;
  let pairGroups = 0;
  let open = false;
  let parens = false;
  let firstDigit = -1;
  let parenZero = -1;
  let end = -1;
  for (;;) {
    let c = text.charCodeAt(i);
    if (c === CH_OPEN) {
      if (open || !isDigit(text.charCodeAt(i + 1))) break;
      open = true;
      parens = true;
      c = text.charCodeAt(++i);
    }
    if (!isDigit(c)) break;
    const groupStart = i;
    if (firstDigit < 0) firstDigit = i;
    while (i <= limit && i < n && isDigit(text.charCodeAt(i))) i++;
    if (i > limit) return; // longer than a phone number
    count += i - groupStart;
    if (count > MAX_DIGITS) return;
    const size = i - groupStart;
    if (groups++ === 0) firstGroup = size;
    if (size === 2) pairGroups++;
    if (size === 4) fours++;
    if (size === 1) shortGroups++;
    end = i;
    c = text.charCodeAt(i);
    if (open) {
      if (c !== CH_CLOSE) return;
      if (i - groupStart === 1 && text.charCodeAt(groupStart) === 48) parenZero = groupStart;
      open = false;
      c = text.charCodeAt(++i);
      if (c === CH_SPACE) c = text.charCodeAt(++i);
      if (isDigit(c) || c === CH_OPEN) continue;
      return; // `(030)` followed by nothing numeric
    }
    if (c === CH_OPEN) continue;
    if (isJoiner(c)) {
      const next = text.charCodeAt(i + 1);
      if (isDigit(next) || (next === CH_OPEN && c === CH_SPACE)) {
        if (c === CH_DOT) dots++;
        else otherSeparators++;
        i++;
        continue;
      }
    }
    break;
  }
  if (count < 7 || !valueMayStart(text, start, sink) || !rightClear(text, end)) return;
  const international = plus || (text.charCodeAt(start) === 48 && text.charCodeAt(start + 1) === 48);
  // Dots are printed between pairs (`06.12.34.56.78`) or US groups (`415.555.2671`), never mixed with other
  // separators; `1.2.3.4` is a version and `18.16.3874.242` a build number.
  const pairsAfterFirst = pairGroups - (firstGroup === 2 ? 1 : 0) === groups - 1;
  if (dots > 0 && (otherSeparators > 0 || shortGroups > 0 || !(pairsAfterFirst || groups === 3))) return;
  // `NL91 ABNA 0417 1643 00`: the digit groups of an IBAN after its bank code, not a phone number.
  if (fours > 0 && fours >= groups - 1 && groups > 1 && isIbanGroupBefore(text, start)) return;
  // Without a trunk 0, national numbers are printed from a 2- or 3-digit area or mobile prefix (`612 34 56 78`,
  // `22 123 45 67`, `415 555 2671`) or after the US `1`; `6826 7966 13` is the tail of an IBAN or card.
  if (!international && !parens && groups > 1 && text.charCodeAt(start) !== 48) {
    if (!(firstGroup === 2 || firstGroup === 3 || (firstGroup === 1 && text.charCodeAt(start) === 49)))
      return;
  }
  // The digits dialled must fit E.164 (7–15 after the `+` or `00`) or a national plan, before any further cost.
  const pairs = groups === 5 && pairGroups === 5;
  if (international) {
    const dialled = count - (plus ? (parenZero >= 0 ? 1 : 0) : 2);
    if (dialled < 7 || dialled > 15) return;
  } else if (nationalPlans(count, text.charCodeAt(firstDigit) - 48, pairs).length === 0) return;
  // Right after another number (`Room 12 030 1234567`, `Kunde 47 253 167 979`, `Ref 12 00 49 76 26 04`), the
  // grouping does not tell where a phone number starts, nor whether it is one: a label must say so.
  const base =
    start === sink.clearStart
      ? PHONE_COMPACT_SCORE
      : international
        ? PHONE_INTERNATIONAL_SCORE
        : groups > 1 || parens
          ? PHONE_FORMATTED_SCORE
          : PHONE_COMPACT_SCORE;
  const score = sink.score(BIT, start, end, base);
  if (score < sink.minScore) return;
  let digits = '';
  for (let k = start; k < end; k++) {
    const c = text.charCodeAt(k);
    // `+49 (0)30 …`: the 0 in parentheses is the trunk prefix, not dialled from abroad.
    if (isDigit(c) && !(plus && k === parenZero)) digits += text[k];
  }
  // Unchecked (undefined) once the call's budget is spent: see PHONE_CHECK_BUDGET.
  if (e164Checked(sink.phones, plus, digits, pairs) === null) return;
  sink.add('phone', start, end, score);
}
