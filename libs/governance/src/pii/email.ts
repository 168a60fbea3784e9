/**
 * E-mail addresses, the pragmatic subset of RFC 5321 that people type: a local part of letters, digits and
 * `._%+-` (at most 64 characters, no leading, trailing or doubled dot), `@`, a domain of at least two labels
 * (letters, digits, hyphens; 1–63 characters each, no hyphen at either end) whose last label is letters only, two or
 * more, 253 characters at most. Non-ASCII letters count as letters (internationalized addresses). Found from each `@`
 * by a bounded scan both ways: no regular expression, no backtracking.
 */
import { CH_AT, CH_DASH, CH_DOT, isAsciiAlnum, isAsciiLetter, isWordChar } from './chars.js';
import { ENTITY_BIT } from './entities.js';
import type { Sink } from './sink.js';

export const EMAIL_SCORE = 0.9;
const BIT = ENTITY_BIT.email;
const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;

function isLocalChar(c: number): boolean {
  if (c < 0x80)
    return isAsciiAlnum(c) || c === CH_DOT || c === 0x5f || c === 0x25 || c === 0x2b || c === CH_DASH;
  return isWordChar(c);
}

function isDomainChar(c: number): boolean {
  if (c < 0x80) return isAsciiAlnum(c) || c === CH_DASH || c === CH_DOT;
  return isWordChar(c);
}

/** Detects the address around the `@` at `at`. */
export function detectEmail(text: string, at: number, sink: Sink): void {
  let start = at;
  while (start > 0 && at - start <= MAX_LOCAL && isLocalChar(text.charCodeAt(start - 1))) start--;
  if (at - start > MAX_LOCAL) return;
  while (start < at && text.charCodeAt(start) === CH_DOT) start++; // `...john@`: the dots are punctuation
  if (start === at || text.charCodeAt(at - 1) === CH_DOT) return;
  const n = text.length;
  let end = at + 1;
  while (end < n && end - at - 1 <= MAX_DOMAIN && isDomainChar(text.charCodeAt(end))) end++;
  if (end - at - 1 > MAX_DOMAIN) return;
  while (end > at + 1 && (text.charCodeAt(end - 1) === CH_DOT || text.charCodeAt(end - 1) === CH_DASH)) end--;
  if (end < n && text.charCodeAt(end) === CH_AT) return;
  // Local part: no doubled dot.
  for (let k = start + 1; k < at; k++) {
    if (text.charCodeAt(k) === CH_DOT && text.charCodeAt(k - 1) === CH_DOT) return;
  }
  // Domain: labels of 1–63 characters, no hyphen at either end; at least two; the last letters only, two or more.
  let labels = 0;
  let labelStart = at + 1;
  let tldLetters = true;
  for (let k = at + 1; k <= end; k++) {
    if (k < end && text.charCodeAt(k) !== CH_DOT) continue;
    const len = k - labelStart;
    if (len < 1 || len > 63) return;
    if (text.charCodeAt(labelStart) === CH_DASH || text.charCodeAt(k - 1) === CH_DASH) return;
    labels++;
    if (k === end) {
      if (len < 2) return;
      for (let t = labelStart; t < end; t++) {
        const c = text.charCodeAt(t);
        if (c < 0x80 ? !isAsciiLetter(c) : !isWordChar(c)) tldLetters = false;
      }
    }
    labelStart = k + 1;
  }
  if (labels < 2 || !tldLetters) return;
  const score = sink.score(BIT, start, end, EMAIL_SCORE);
  if (score >= sink.minScore) sink.add('email', start, end, score);
}
