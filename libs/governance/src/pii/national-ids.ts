/**
 * National identifiers written as digits: US SSN, German tax id (IdNr), Dutch BSN, Polish PESEL (all read from a
 * digit run), the Spanish DNI (a run of eight digits and its letter) and the French NIR (its own scan: the Corsican
 * departments 2A and 2B put letters among the digits).
 */
import { CH_DASH, CH_DOT, CH_SPACE, codeAt, isAsciiLetter, isDigit, rightClear, upper } from './chars.js';
import { bsnValid, deTaxIdValid, dniLetter, nirKeyOf, peselValid } from './checksums.js';
import { type DigitRun, groupsAre3, groupsAre4 } from './digits.js';
import { ENTITY_BIT } from './entities.js';
import { type Sink, valueMayStart } from './sink.js';

/** `123-45-6789`: the SSN's own shape. */
export const SSN_DASHED_SCORE = 0.6;
/** `123 45 6789`. */
export const SSN_SPACED_SCORE = 0.45;
/** Weak checks (BSN passes 1 in 11 random numbers, PESEL about 1 in 60, the IdNr about 1 in 100, the SSN ranges
 * most): a context word is needed to pass the default threshold. */
export const WEAK_ID_SCORE = 0.3;
/** A grouping specific to the id (`1234.56.782`, `86 095 742 719`). */
export const WEAK_ID_FORMATTED_SCORE = 0.4;
/** Eight digits and the right one of 23 letters, a shape seldom seen otherwise. */
export const DNI_SCORE = 0.7;
/** Mod 97 and a structured number (sex, month, department). */
export const NIR_SCORE = 0.85;
/** A NIR of the rare sex codes (3, 4, 7, 8): a label must say it is one (an Amex number or an order number may read so). */
export const NIR_RARE_SCORE = 0.45;

/**
 * A valid US Social Security number: area not 000, 666 or 900–999, group not 00, serial not 0000, and not one of the
 * numbers known from advertising (078-05-1120, 219-09-9999, 123-45-6789).
 */
export function ssnValid(d: ArrayLike<number>): boolean {
  const area = d[0]! * 100 + d[1]! * 10 + d[2]!;
  const group = d[3]! * 10 + d[4]!;
  const serial = d[5]! * 1000 + d[6]! * 100 + d[7]! * 10 + d[8]!;
  if (area === 0 || area === 666 || area >= 900 || group === 0 || serial === 0) return false;
  if (area === 78 && group === 5 && serial === 1120) return false;
  if (area === 219 && group === 9 && serial === 9999) return false;
  return !(area === 123 && group === 45 && serial === 6789);
}

function report(
  sink: Sink,
  entity: 'usSsn' | 'nlBsn' | 'plPesel' | 'deTaxId' | 'esDni',
  start: number,
  end: number,
  base: number,
): void {
  const score = sink.score(ENTITY_BIT[entity], start, end, base);
  if (score >= sink.minScore) sink.add(entity, start, end, score);
}

/** Detects the digit-run identifiers: the run (or, for the DNI, the run and its letter) must be the whole value. */
export function detectRunIds(text: string, run: DigitRun, sink: Sink): void {
  const n = run.count;
  if (n !== 8 && n !== 9 && n !== 11) return;
  if (!valueMayStart(text, run.start, sink)) return;
  const wanted = sink.wanted;
  if (n === 8) {
    if (wanted & ENTITY_BIT.esDni) detectDni(text, run, sink);
    return;
  }
  if (!rightClear(text, run.end)) return;
  const d = run.digits;
  const single = run.groupCount === 1;
  if (n === 9) {
    if (wanted & ENTITY_BIT.usSsn && ssnValid(d)) {
      if (single) report(sink, 'usSsn', run.start, run.end, WEAK_ID_SCORE);
      else if (groupsAre3(run, 3, 2, 4) && run.separator === CH_DASH) {
        report(sink, 'usSsn', run.start, run.end, SSN_DASHED_SCORE);
      } else if (groupsAre3(run, 3, 2, 4) && run.separator === CH_SPACE) {
        report(sink, 'usSsn', run.start, run.end, SSN_SPACED_SCORE);
      }
    }
    if (wanted & ENTITY_BIT.nlBsn && bsnValid(d)) {
      if (single) report(sink, 'nlBsn', run.start, run.end, WEAK_ID_SCORE);
      else if (groupsAre3(run, 4, 2, 3) && run.separator === CH_DOT) {
        report(sink, 'nlBsn', run.start, run.end, WEAK_ID_FORMATTED_SCORE);
      } else if (groupsAre3(run, 3, 3, 3) && (run.separator === CH_SPACE || run.separator === CH_DOT)) {
        report(sink, 'nlBsn', run.start, run.end, WEAK_ID_SCORE);
      }
    }
    return;
  }
  // Eleven digits.
  if (wanted & ENTITY_BIT.plPesel && single && peselValid(d)) {
    report(sink, 'plPesel', run.start, run.end, WEAK_ID_SCORE);
  }
  if (wanted & ENTITY_BIT.deTaxId && deTaxIdValid(d)) {
    if (single) report(sink, 'deTaxId', run.start, run.end, WEAK_ID_SCORE);
    else if (groupsAre4(run, 2, 3, 3, 3) && run.separator === CH_SPACE) {
      report(sink, 'deTaxId', run.start, run.end, WEAK_ID_FORMATTED_SCORE);
    }
  }
}

/** The DNI: eight digits (compact or `12.345.678`), an optional `-` or space, the control letter. */
function detectDni(text: string, run: DigitRun, sink: Sink): void {
  if (!(run.groupCount === 1 || (groupsAre3(run, 2, 3, 3) && run.separator === CH_DOT))) return;
  let i = run.end;
  const sep = codeAt(text, i);
  if (sep === CH_DASH || sep === CH_SPACE) i++;
  const letter = codeAt(text, i);
  if (!isAsciiLetter(letter) || !rightClear(text, i + 1)) return;
  let value = 0;
  for (let k = 0; k < 8; k++) value = value * 10 + run.digits[k]!;
  if (dniLetter(value).charCodeAt(0) !== upper(letter)) return;
  report(sink, 'esDni', run.start, i + 1, DNI_SCORE);
}

function validNirMonth(mm: number): boolean {
  return (mm >= 1 && mm <= 12) || mm === 20 || (mm >= 30 && mm <= 42) || mm >= 50;
}

/** Scratch of the NIR scan: the 15 digits, the Corsican department read as 19 or 18. */
const NIR = new Uint8Array(15);

/**
 * Detects a French NIR (numéro de sécurité sociale) starting at `start`: 15 characters, compact or with single
 * spaces (`1 84 12 76 451 089 46`): sex 1–4, 7 or 8, year, month (01–12, or the INSEE's 20, 30–42, 50–99 for an
 * unknown month), department (01–99, 2A, 2B), commune, order number, and the key 97 − (number mod 97).
 */
export function detectNir(text: string, start: number, sink: Sink): void {
  const sex = text.charCodeAt(start) - 48;
  if (!(sex >= 1 && sex <= 4) && sex !== 7 && sex !== 8) return;
  if (!valueMayStart(text, start, sink)) return;
  const n = text.length;
  let k = 0;
  let i = start;
  let corsica = false;
  while (k < 15 && i < n) {
    const c = text.charCodeAt(i);
    if (isDigit(c)) {
      NIR[k++] = c - 48;
      i++;
    } else if (k === 6 && (c === 65 || c === 66) && NIR[5] === 2) {
      // 2A and 2B are read as 19 and 18.
      NIR[5] = 1;
      NIR[k++] = c === 65 ? 9 : 8;
      corsica = true;
      i++;
    } else if (c === CH_SPACE && k > 0 && i + 1 < n && isNirChar(text.charCodeAt(i + 1))) {
      i++;
    } else break;
  }
  if (k !== 15 || !rightClear(text, i)) return;
  const at = (p: number) => NIR[p]! * 10 + NIR[p + 1]!;
  if (!validNirMonth(at(3))) return;
  if (!corsica && at(5) === 0) return;
  if (NIR[7]! + NIR[8]! + NIR[9]! === 0 || NIR[10]! + NIR[11]! + NIR[12]! === 0) return;
  const key = at(13);
  if (key < 1 || key > 97 || nirKeyOf(NIR) !== key) return;
  // Sex 3, 4, 7, 8 (people registered abroad, temporary numbers) are rare; 15 random digits starting so are not.
  const score = sink.score(ENTITY_BIT.frNir, start, i, sex <= 2 ? NIR_SCORE : NIR_RARE_SCORE);
  if (score >= sink.minScore) sink.add('frNir', start, i, score);
}

function isNirChar(c: number): boolean {
  return isDigit(c) || c === 65 || c === 66;
}
