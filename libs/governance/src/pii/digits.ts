/**
 * The digit run at a position: groups of digits joined by single separators (space, `-`, `.`, `/`), read once per
 * run into reused scratch arrays, so that the number detectors (cards, SSN, BSN, PESEL, tax ids) test its shape
 * without allocating.
 */
import { isDigit, isJoiner } from './chars.js';

/** Longer runs than this are no identifier; reading stops there (and the run then fails every right boundary). */
export const MAX_RUN_DIGITS = 24;

export interface DigitRun {
  /** Digit values, `count` of them. */
  readonly digits: Uint8Array;
  /** Offset in the text of each digit. */
  readonly offsets: Int32Array;
  /** Digit count of each group, `groupCount` of them. */
  readonly groupSizes: Uint8Array;
  count: number;
  groupCount: number;
  start: number;
  /** Exclusive end: after the last digit read. */
  end: number;
  /** The one separator used between all groups, 0 when there is one group, −1 when they differ. */
  separator: number;
}

const RUN: DigitRun = {
  digits: new Uint8Array(MAX_RUN_DIGITS + 1),
  offsets: new Int32Array(MAX_RUN_DIGITS + 1),
  groupSizes: new Uint8Array(MAX_RUN_DIGITS + 1),
  count: 0,
  groupCount: 0,
  start: 0,
  end: 0,
  separator: 0,
};

/**
 * Reads the digit run starting at `start` (a digit) into the shared scratch and returns it; valid until the next
 * call. Linear in the run's length, which is bounded by MAX_RUN_DIGITS.
 */
export function readDigitRun(text: string, start: number): DigitRun {
  const run = RUN;
  const n = text.length;
  let i = start;
  let count = 0;
  let groups = 0;
  let separator = 0;
  for (;;) {
    const groupStart = count;
    while (i < n && count <= MAX_RUN_DIGITS) {
      const c = text.charCodeAt(i);
      if (c < 48 || c > 57) break;
      run.digits[count] = c - 48;
      run.offsets[count] = i;
      count++;
      i++;
    }
    run.groupSizes[groups++] = count - groupStart;
    if (count > MAX_RUN_DIGITS || i + 1 >= n) break;
    const sep = text.charCodeAt(i);
    if (!isJoiner(sep) || !isDigit(text.charCodeAt(i + 1))) break;
    separator = groups === 1 ? sep : separator === sep ? sep : -1;
    i++;
  }
  run.count = count;
  run.groupCount = groups;
  run.start = start;
  run.end = run.offsets[count - 1]! + 1;
  run.separator = separator;
  return run;
}

/** Whether the run has three groups of these sizes. */
export function groupsAre3(run: DigitRun, a: number, b: number, c: number): boolean {
  const s = run.groupSizes;
  return run.groupCount === 3 && s[0] === a && s[1] === b && s[2] === c;
}

/** Whether the run has four groups of these sizes. */
export function groupsAre4(run: DigitRun, a: number, b: number, c: number, d: number): boolean {
  const s = run.groupSizes;
  return run.groupCount === 4 && s[0] === a && s[1] === b && s[2] === c && s[3] === d;
}
