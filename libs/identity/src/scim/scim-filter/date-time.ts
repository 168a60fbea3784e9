import { isDigit } from './lexer.js';

/** dateTime values, read the same way by the SQL compiler and the in-memory evaluator. */

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * An ISO 8601 / xsd:dateTime string, `YYYY-MM-DDThh:mm:ss[.fraction][Z|±hh:mm]` (no zone means UTC), as a Date at
 * millisecond precision (further digits are dropped); null if it is not one or falls outside years 1-9999.
 */
export function parseDateTime(text: string): Date | null {
  const num = (from: number, length: number): number => {
    let value = 0;
    for (let k = from; k < from + length; k++) {
      const c = text.charCodeAt(k);
      if (!isDigit(c)) return -1;
      value = value * 10 + (c - 0x30);
    }
    return value;
  };
  const at = (k: number, ch: string) => text[k] === ch;
  if (
    text.length < 19 ||
    !at(4, '-') ||
    !at(7, '-') ||
    !(at(10, 'T') || at(10, 't')) ||
    !at(13, ':') ||
    !at(16, ':')
  ) {
    return null;
  }
  const year = num(0, 4);
  const month = num(5, 2);
  const day = num(8, 2);
  const hour = num(11, 2);
  const minute = num(14, 2);
  const second = num(17, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59)
    return null;
  if (second < 0 || second > 59) return null;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!)) return null;
  let i = 19;
  let millis = 0;
  if (at(i, '.')) {
    i++;
    const from = i;
    while (i < text.length && isDigit(text.charCodeAt(i))) i++;
    if (i === from) return null;
    const digits = text.slice(from, Math.min(i, from + 3));
    millis = Number(digits.padEnd(3, '0'));
  }
  // The zone: none or Z is UTC, otherwise ±hh:mm.
  let offset = 0;
  const utc = i === text.length || ((at(i, 'Z') || at(i, 'z')) && i + 1 === text.length);
  if (!utc) {
    if (!((at(i, '+') || at(i, '-')) && i + 6 === text.length && at(i + 3, ':'))) return null;
    const oh = num(i + 1, 2);
    const om = num(i + 4, 2);
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return null;
    offset = (at(i, '-') ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  date.setTime(date.getTime() - offset * 60_000);
  const utcYear = date.getUTCFullYear();
  return utcYear >= 1 && utcYear <= 9999 ? date : null;
}
