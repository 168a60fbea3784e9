/**
 * IP addresses. IPv4: four decimal octets 0–255 without leading zeros, not part of a longer dotted number (`1.2.3.4.5`
 * is a version, not an address); a `:port` or `/prefix` may follow. IPv6: a span of hex digits, colons and dots (at most
 * 45 characters) with `::` or seven colons, confirmed by `node:net`'s isIPv6 (full, compressed and IPv4-suffixed forms).
 */
import { isIPv6 } from 'node:net';
import { CH_COLON, CH_DOT, codeAt, isDigit, isHex, isWordChar } from './chars.js';
import { ENTITY_BIT } from './entities.js';
import type { Sink } from './sink.js';

/** An IPv4-shaped number is as often a version or an OID: it passes alone, and a version word puts it below. */
export const IPV4_SCORE = 0.6;
export const IPV6_SCORE = 0.7;
const BIT = ENTITY_BIT.ipAddress;
const IPV6_MAX = 45;

/** Detects an IPv4 address whose first octet starts at `start` (a digit not preceded by a word character). */
export function detectIpv4(text: string, start: number, sink: Sink): void {
  const before = codeAt(text, start - 1);
  if (before === CH_DOT || before === CH_COLON || (before >= 0 && isWordChar(before))) return;
  const n = text.length;
  let i = start;
  for (let octet = 0; octet < 4; octet++) {
    if (octet > 0) {
      if (i >= n || text.charCodeAt(i) !== CH_DOT) return;
      i++;
    }
    const first = i;
    let value = 0;
    while (i < n && i - first < 4 && isDigit(text.charCodeAt(i))) {
      value = value * 10 + text.charCodeAt(i) - 48;
      i++;
    }
    const len = i - first;
    if (len === 0 || len > 3 || value > 255 || (len > 1 && text.charCodeAt(first) === 48)) return;
  }
  const after = codeAt(text, i);
  if (after >= 0 && isWordChar(after)) return;
  if (after === CH_DOT && isDigit(codeAt(text, i + 1))) return; // 1.2.3.4.5
  const score = sink.score(BIT, start, i, IPV4_SCORE);
  if (score >= sink.minScore) sink.add('ipAddress', start, i, score);
}

function isIpv6Char(c: number): boolean {
  return isHex(c) || c === CH_COLON || c === CH_DOT;
}

/** Detects an IPv6 address starting at `start` (a hex digit or the first colon of a leading `::`). */
export function detectIpv6(text: string, start: number, sink: Sink): void {
  const before = codeAt(text, start - 1);
  if (before >= 0 && (isWordChar(before) || before === CH_COLON || before === CH_DOT)) return;
  const n = text.length;
  let end = start;
  while (end < n && end - start <= IPV6_MAX && isIpv6Char(text.charCodeAt(end))) end++;
  if (end - start > IPV6_MAX) return;
  // A sentence may end right after the address: `… from ::1.` or `fe80::1:`.
  while (end > start && text.charCodeAt(end - 1) === CH_DOT) end--;
  if (text.charCodeAt(end - 1) === CH_COLON && text.charCodeAt(end - 2) !== CH_COLON) end--;
  const after = codeAt(text, end);
  if (after >= 0 && isWordChar(after)) return;
  let colons = 0;
  let double = false;
  for (let k = start; k < end; k++) {
    if (text.charCodeAt(k) === CH_COLON) {
      colons++;
      if (text.charCodeAt(k + 1) === CH_COLON) double = true;
    }
  }
  if (colons < 2 || (!double && colons < 6)) return;
  if (!isIPv6(text.slice(start, end))) return;
  const score = sink.score(BIT, start, end, IPV6_SCORE);
  if (score >= sink.minScore) sink.add('ipAddress', start, end, score);
}
