/**
 * Check-digit schemes of the detectors, on digit values (0–9) or compact upper-case strings. Pure functions; the
 * scanners call them only on candidates that already have the right shape.
 */

type Digits = ArrayLike<number>;

/** Digit values of a string of ASCII digits (tests and callers outside the scanner). */
export function digitsOf(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) out.push(s.charCodeAt(i) - 48);
  return out;
}

/** Luhn (ISO/IEC 7812-1) over the first `n` digits, the last being the check digit. */
export function luhnValid(d: Digits, n: number = d.length): boolean {
  let sum = 0;
  let double = false;
  for (let i = n - 1; i >= 0; i--) {
    let v = d[i]!;
    if (double) {
      v *= 2;
      if (v > 9) v -= 9;
    }
    sum += v;
    double = !double;
  }
  return sum % 10 === 0;
}

/** ISO 7064 MOD 11,10 over `n` digits, the last being the check digit (the German tax id's scheme). */
export function iso7064Mod11_10Valid(d: Digits, n: number = d.length): boolean {
  let product = 10;
  for (let i = 0; i < n - 1; i++) {
    let sum = (d[i]! + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  const check = (11 - product) % 10;
  return check === d[n - 1];
}

/**
 * The German Steuerliche Identifikationsnummer (11 digits): no leading 0; among the first ten digits exactly one
 * digit occurs twice or three times (three times not all in a row) and every other at most once; ISO 7064 MOD 11,10.
 */
export function deTaxIdValid(d: Digits): boolean {
  if (d.length < 11 || d[0] === 0) return false;
  const counts = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
  for (let i = 0; i < 10; i++) counts[d[i]!]!++;
  let repeated = -1;
  for (let v = 0; v < 10; v++) {
    const c = counts[v]!;
    if (c > 3) return false;
    if (c >= 2) {
      if (repeated >= 0) return false;
      repeated = v;
    }
  }
  if (repeated < 0) return false;
  if (counts[repeated] === 3) {
    for (let i = 0; i + 2 < 10; i++) {
      if (d[i] === repeated && d[i + 1] === repeated && d[i + 2] === repeated) return false;
    }
  }
  return iso7064Mod11_10Valid(d, 11);
}

/** The Dutch BSN's 11-test: 9 digits weighted 9..2 and −1, the sum divisible by 11 (and not zero). */
export function bsnValid(d: Digits): boolean {
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += d[i]! * (9 - i);
  sum -= d[8]!;
  return sum > 0 && sum % 11 === 0;
}

const PESEL_WEIGHTS = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];

/** Days in a month of the Gregorian calendar (month 1–12). */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * The Polish PESEL (11 digits): YYMMDD with the century in the month (+80: 1800s, +0: 1900s, +20: 2000s, +40: 2100s,
 * +60: 2200s) forming a real date, then weights 1,3,7,9 repeated and the check digit (10 − sum mod 10) mod 10.
 */
export function peselValid(d: Digits): boolean {
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += d[i]! * PESEL_WEIGHTS[i]!;
  if ((10 - (sum % 10)) % 10 !== d[10]) return false;
  const yy = d[0]! * 10 + d[1]!;
  const mm = d[2]! * 10 + d[3]!;
  const dd = d[4]! * 10 + d[5]!;
  const century = [1900, 2000, 2100, 2200, 1800][Math.floor(mm / 20)]!;
  const month = mm % 20;
  if (month < 1 || month > 12 || dd < 1) return false;
  return dd <= daysInMonth(century + yy, month);
}

/**
 * ISO 13616 (IBAN) mod-97 check of a compact upper-case IBAN: the first four characters moved to the end, letters
 * read as 10–35, the whole number mod 97 equal to 1.
 */
export function ibanChecksumValid(compact: string): boolean {
  let r = 0;
  const n = compact.length;
  for (let k = 0; k < n; k++) {
    const c = compact.charCodeAt((k + 4) % n);
    if (c >= 48 && c <= 57) r = (r * 10 + (c - 48)) % 97;
    else if (c >= 65 && c <= 90) r = (r * 100 + (c - 55)) % 97;
    else return false;
  }
  return r === 1;
}

/**
 * The French NIR's key from the 13 digits of the number (the Corsican departments already read as numbers: 2A as 19,
 * 2B as 18, the INSEE rule): 97 − (number mod 97).
 */
export function nirKeyOf(d: Digits): number {
  let r = 0;
  for (let i = 0; i < 13; i++) r = (r * 10 + d[i]!) % 97;
  return 97 - r;
}

/** The key of a NIR written as 13 characters (digits, 2A or 2B as the department); −1 for a malformed one. */
export function nirKey(compact13: string): number {
  if (compact13.length !== 13) return -1;
  const d: number[] = [];
  for (let i = 0; i < 13; i++) {
    const c = compact13.charCodeAt(i);
    if (i === 6 && compact13.charCodeAt(5) === 50 && (c === 65 || c === 66)) {
      d[5] = 1;
      d.push(c === 65 ? 9 : 8);
    } else if (c >= 48 && c <= 57) d.push(c - 48);
    else return -1;
  }
  return nirKeyOf(d);
}

/** The Spanish DNI/NIE control letter of a number (0 ≤ n < 10^8): n mod 23 into `TRWAGMYFPDXBNJZSQVHLCKE`. */
export function dniLetter(n: number): string {
  return 'TRWAGMYFPDXBNJZSQVHLCKE'.charAt(n % 23);
}

/** Values of 0–9 then A–Z at the odd (1st, 3rd, …) positions of a codice fiscale. */
const CF_ODD = [
  1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16,
  10, 22, 25, 24, 23,
];

/** Index of a digit or upper-case letter in 0–9A–Z, or −1. */
function alnumIndex(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 90) return c - 55;
  return -1;
}

/**
 * The check character of an Italian codice fiscale from its first 15 upper-case characters: the odd positions
 * through the odd table, the even ones by value (digits 0–9, letters 0–25), the sum mod 26 as a letter. '' for a
 * malformed input.
 */
export function fiscalCodeCheckChar(first15: string): string {
  if (first15.length !== 15) return '';
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const k = alnumIndex(first15.charCodeAt(i));
    if (k < 0) return '';
    sum += i % 2 === 0 ? CF_ODD[k]! : k < 10 ? k : k - 10;
  }
  return String.fromCharCode(65 + (sum % 26));
}
