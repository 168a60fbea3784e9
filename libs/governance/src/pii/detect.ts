/**
 * The scanner: one pass over the text that stops only at cheap anchors (a digit, an `@`, a `+` or `(`, a `:`) and runs
 * there the detectors that can start so, each a bounded local scan: at a digit, on the whole token around it (read
 * once: `DE89`, `RSSMRA85T10A562S`, `4111`), and on the letters just before it (`AB 12 34 56 C`). Every value the
 * detectors know holds a digit, except a codice fiscale whose seven digits were all replaced by omocodia letters,
 * which is not looked for. A digit token that continues a run read from an earlier one (`DE89 3704`, `030 1234567`)
 * is not read again, unless nothing found so far covers it and a value may start there (`10:42 4111 1111 1111 1111`:
 * see `mayRestart`); its run is bounded, so the scan stays linear. Matches are kept in groups of overlapping
 * candidates; a group is resolved (the higher score wins an overlap, then the longer span) as soon as the scan is past
 * the point where a later candidate could still overlap it, which lets `piiTypesIn` stop early with the same answer as
 * `detectPii`.
 */
import {
  CH_AT,
  CH_COLON,
  CH_COMMA,
  CH_DASH,
  CH_DOT,
  CH_OPEN,
  CH_PLUS,
  CH_SPACE,
  codeAt,
  isAsciiAlnum,
  isDigit,
  isHex,
  isJoiner,
  isUpper,
  isWordChar,
} from './chars.js';
import { detectCard } from './cards.js';
import { CONTEXT_FINAL, withContext } from './context.js';
import { readDigitRun } from './digits.js';
import { detectEmail } from './email.js';
import {
  DEFAULT_MIN_SCORE,
  ENTITY_BIT,
  entityMask,
  type PiiEntity,
  type PiiMatch,
  PII_ENTITIES,
} from './entities.js';
import { detectIban } from './iban.js';
import { detectIpv4, detectIpv6 } from './ip.js';
import { detectFiscalCode, detectNie, detectNino } from './letter-ids.js';
import { detectNir, detectRunIds } from './national-ids.js';
import { detectPhone, type PhoneChecks, phoneChecks } from './phone.js';
import type { Sink } from './sink.js';

/** How far before its anchor a match may start: an e-mail's local part (64) before its `@`. */
const MAX_LOOKBACK = 72;

const B = ENTITY_BIT;
const RUN_IDS = B.usSsn | B.nlBsn | B.plPesel | B.deTaxId | B.esDni;

/** Collects the candidates of one scan and resolves their overlaps group by group. */
class Collector implements Sink {
  readonly out: PiiMatch[] = [];
  /** Bits of the entity types among the resolved matches. */
  found = 0;
  /** See Sink.clearStart: set by `digitToken` for each digit token. */
  clearStart = -1;
  /** The furthest end of the candidates added so far (before overlaps are resolved). */
  coveredEnd = -1;
  private pending: PiiMatch[] = [];
  private pendingEnd = -1;

  constructor(
    readonly text: string,
    readonly wanted: number,
    readonly minScore: number,
    readonly phones: PhoneChecks,
  ) {}

  score(bit: number, start: number, end: number, base: number): number {
    return base < CONTEXT_FINAL ? withContext(this.text, start, end, bit, base) : base;
  }

  add(entity: PiiEntity, start: number, end: number, score: number): void {
    if (score < this.minScore || !(this.wanted & B[entity])) return;
    this.pending.push({ entity, start, end, score });
    if (end > this.pendingEnd) this.pendingEnd = end;
    if (end > this.coveredEnd) this.coveredEnd = end;
  }

  /** The scan is at `position`: no later candidate can start before `position − MAX_LOOKBACK`. */
  reach(position: number): void {
    if (this.pending.length > 0 && position - MAX_LOOKBACK >= this.pendingEnd) this.flush();
  }

  flush(): void {
    const group = this.pending;
    if (group.length === 0) return;
    this.pendingEnd = -1;
    if (group.length === 1) this.keep(group[0]!);
    else for (const m of resolveOverlaps(group)) this.keep(m);
    group.length = 0;
  }

  private keep(m: PiiMatch): void {
    this.out.push(m);
    this.found |= B[m.entity];
  }
}

function better(a: PiiMatch, b: PiiMatch): number {
  return b.score - a.score || b.end - b.start - (a.end - a.start) || a.start - b.start;
}

/**
 * The non-overlapping subset, greedily by score then length, sorted by start. Pairwise checks for the usual handful
 * of candidates; a taken-position map for a large group (adversarial input), which keeps it linear in the span.
 */
function resolveOverlaps(group: PiiMatch[]): PiiMatch[] {
  if (group.length === 2) {
    const [a, b] = group as [PiiMatch, PiiMatch];
    if (a.end <= b.start || b.end <= a.start) return a.start <= b.start ? [a, b] : [b, a];
    return [better(a, b) <= 0 ? a : b];
  }
  const ranked = [...group].sort(better);
  const kept: PiiMatch[] = [];
  if (ranked.length <= 16) {
    for (const m of ranked) {
      if (kept.every((k) => m.end <= k.start || m.start >= k.end)) kept.push(m);
    }
  } else {
    let lo = Infinity;
    let hi = 0;
    for (const m of ranked) {
      lo = Math.min(lo, m.start);
      hi = Math.max(hi, m.end);
    }
    const taken = new Uint8Array(hi - lo);
    for (const m of ranked) {
      let free = true;
      for (let k = m.start; k < m.end && free; k++) free = taken[k - lo] === 0;
      if (!free) continue;
      taken.fill(1, m.start - lo, m.end - lo);
      kept.push(m);
    }
  }
  return kept.sort((a, b) => a.start - b.start);
}

/** A token (ASCII letters and digits) `text[start, end)` that starts with a digit. */
function digitToken(text: string, start: number, end: number, c: Collector): void {
  const wanted = c.wanted;
  const prev = codeAt(text, start - 1);
  c.clearStart = -1;
  if (prev >= 0) {
    if ((isJoiner(prev) || prev === CH_COLON || prev === CH_COMMA) && isDigit(codeAt(text, start - 2))) {
      // The continuation of a run read from an earlier token (`DE89 3704`, `030 1234567`, `1.2.3.4`, `12:30`).
      // When that run found nothing covering this token, a value may still start here, after a number that stands
      // alone (`10:42 4111 1111 1111 1111`, `Invoice 2024 4111111111111111`, `Ticket 42 536-22-1234`).
      if (start < c.coveredEnd || !mayRestart(text, start, end, prev)) return;
      // Short, and nothing numeric goes on after it: no value starts here (`1244,67 €`, `10:42 Uhr`).
      const after = codeAt(text, end + 1);
      if (end - start < 7 && codeAt(text, end) !== CH_COLON && !isDigit(after) && after !== CH_OPEN) return;
      c.clearStart = start;
    }
    if (prev === CH_PLUS || prev === 0x29 || isWordChar(prev)) return;
    // `AB 12 34 56 C` and `X-1234567-L`: an identifier whose letters stand apart.
    if (prev === CH_SPACE || prev === CH_DASH) spacedLetterIds(text, start, c);
  }
  const next = codeAt(text, end);
  const len = end - start;
  if (wanted & B.ipAddress) {
    if (next === CH_DOT && len <= 3) detectIpv4(text, start, c);
    else if (next === CH_COLON && len <= 4) detectIpv6(text, start, c);
  }
  if (!(wanted & (RUN_IDS | B.creditCard | B.phone | B.frNir))) return;
  const run = readDigitRun(text, start);
  if (wanted & B.creditCard) detectCard(text, run, c);
  if (wanted & RUN_IDS) detectRunIds(text, run, c);
  const count = run.count;
  if (wanted & B.frNir) {
    const after = codeAt(text, run.end);
    if (count === 15 || (count >= 6 && (after === 65 || after === 66))) detectNir(text, start, c);
  }
  if (
    wanted & B.phone &&
    prev !== CH_OPEN &&
    (count >= 7 || (next === CH_SPACE && codeAt(text, end + 1) === CH_OPEN))
  ) {
    detectPhone(text, start, c);
  }
}

/**
 * Whether the digit token `text[start, end)`, glued by `sep` to the number before it, may start a value of its own
 * when the run read from that number found nothing. Not inside `2026-11-27`, `1.2.3.4.5` or `12:30`. After a comma,
 * yes: a comma joins no run, its own run is the token's (`42,4111111111111111`, a CSV row; `1,234,567` holds nothing
 * to find). After a space, only after a number of digits alone (not an IBAN's `DE88 3704`, nor `+49 30`): when that
 * number ends another one (`10:42 4111 …`, `27.11.2026 4111 …`), unless it is itself a group of a run joined by spaces
 * (`DE88 3704 0044`): the second group of a run is retried, never a later one; when it stands alone, unless both have
 * the same length and the run goes on (`1234 5678 9012 3456 7890`, `06 12 34 56 78`): one number printed in equal
 * groups. Walks back over the previous token only, so each character is walked at most once more.
 */
function mayRestart(text: string, start: number, end: number, sep: number): boolean {
  if (sep === CH_COMMA) return true;
  if (sep !== CH_SPACE) return false;
  let h = start - 2;
  while (h > 0 && isDigit(text.charCodeAt(h - 1))) h--;
  const before = codeAt(text, h - 1);
  if (before >= 0 && (isWordChar(before) || before === CH_PLUS || before === CH_AT)) return false;
  if ((isJoiner(before) || before === CH_COLON || before === CH_COMMA) && isDigit(codeAt(text, h - 2))) {
    return before !== CH_SPACE;
  }
  return !(start - 1 - h === end - start && codeAt(text, end) === CH_SPACE && isDigit(codeAt(text, end + 1)));
}

/** Before the digits at `start`: `AB ` of a spaced NINO, or `X-` / `X ` of a separated NIE. */
function spacedLetterIds(text: string, start: number, c: Collector): void {
  const l1 = codeAt(text, start - 2);
  if (!isUpper(l1)) return;
  const l0 = codeAt(text, start - 3);
  if (isUpper(l0)) {
    if (
      c.wanted & B.ukNino &&
      text.charCodeAt(start - 1) === CH_SPACE &&
      !isWordChar(codeAt(text, start - 4))
    ) {
      detectNino(text, start - 3, c);
    }
  } else if (l1 >= 88 && l1 <= 90 && c.wanted & B.esDni && !isWordChar(l0)) detectNie(text, start - 2, c);
}

/** A token `text[start, end)` that starts with a letter and holds a digit. */
function letterToken(text: string, start: number, end: number, c: Collector): void {
  const wanted = c.wanted;
  const len = end - start;
  if (isWordChar(codeAt(text, start - 1))) return;
  if (wanted & B.itFiscalCode && len === 16) detectFiscalCode(text, start, end, c);
  if (wanted & B.iban && len >= 4) detectIban(text, start, c);
  if (wanted & B.ukNino && len === 9) detectNino(text, start, c);
  const first = text.charCodeAt(start);
  if (wanted & B.esDni && (len === 9 || len === 8) && first >= 88 && first <= 90) detectNie(text, start, c);
  if (wanted & B.ipAddress && len <= 4 && codeAt(text, end) === CH_COLON) detectIpv6(text, start, c);
}

/** At a colon: an IPv6 address that starts with `::` or with a group of hex letters only (`fe80` has a digit). */
function colon(text: string, at: number, c: Collector): void {
  const prev = codeAt(text, at - 1);
  if (prev === CH_COLON || isDigit(prev)) return;
  if (!isHex(prev)) {
    if (codeAt(text, at + 1) === CH_COLON) detectIpv6(text, at, c);
    return;
  }
  let start = at - 1;
  while (start > 0 && at - start < 4 && isHex(text.charCodeAt(start - 1))) start--;
  for (let k = start; k < at; k++) if (isDigit(text.charCodeAt(k))) return;
  detectIpv6(text, start, c);
}

/**
 * The anchors, all between `(` (40) and `@` (64): bit (code − 40) is set for `(`, `+`, the digits, `:` and `@`. A
 * constant mask rather than a table: the skip loop, which sees every character, then needs no memory load.
 */
const ANCHOR_BITS = (1 << 0) | (1 << 3) | (0x3ff << 8) | (1 << 18) | (1 << 24);

/** One pass over `text`; with `stopWhen` (a bit mask), returns as soon as the resolved matches cover it. */
function scan(c: Collector, stopWhen: number): void {
  const text = c.text;
  const wanted = c.wanted;
  const n = text.length;
  let i = 0;
  for (;;) {
    let ch = 0;
    for (; i < n; i++) {
      ch = text.charCodeAt(i);
      const bit = (ch - 40) >>> 0;
      if (bit <= 24 && ((ANCHOR_BITS >>> bit) & 1) !== 0) break;
    }
    if (i >= n) break;
    if (ch >= 48 && ch <= 57) {
      // The whole token around the digit (ASCII letters and digits), read once.
      let start = i;
      while (start > 0 && isAsciiAlnum(text.charCodeAt(start - 1))) start--;
      let end = i + 1;
      while (end < n && isAsciiAlnum(text.charCodeAt(end))) end++;
      c.reach(start);
      if (stopWhen !== 0 && (c.found & stopWhen) === stopWhen) return;
      if (start === i) digitToken(text, start, end, c);
      else letterToken(text, start, end, c);
      i = end;
      continue;
    }
    if (ch === CH_AT) {
      if (wanted & B.email) detectEmail(text, i, c);
    } else if (ch === CH_COLON) {
      if (wanted & B.ipAddress) colon(text, i, c);
    } else if (wanted & B.phone && isDigit(codeAt(text, i + 1))) detectPhone(text, i, c);
    i++;
  }
  c.flush();
}

/**
 * Matches in `text` for the given entity types, at or above minScore (default DEFAULT_MIN_SCORE), sorted by start,
 * non-overlapping (on overlap the higher score wins, then the longer). Linear in the text's length; phone numbers
 * beyond the call's PHONE_CHECK_BUDGET validations are reported unchecked.
 */
export function detectPii(
  text: string,
  entities: ReadonlySet<PiiEntity>,
  minScore: number = DEFAULT_MIN_SCORE,
): PiiMatch[] {
  return detectWith(text, entities, minScore, phoneChecks());
}

/** `detectPii` with the phone validations of a larger call (a masked JSON value and its hashes). */
export function detectWith(
  text: string,
  entities: ReadonlySet<PiiEntity>,
  minScore: number,
  phones: PhoneChecks,
): PiiMatch[] {
  const wanted = entityMask(entities);
  if (wanted === 0 || text.length === 0) return [];
  const c = new Collector(text, wanted, minScore, phones);
  scan(c, 0);
  return c.out;
}

/**
 * The distinct entity types found in `text` (in PII_ENTITIES order): the types of `detectPii`'s matches, but the scan
 * stops once every type asked for has been found.
 */
export function piiTypesIn(
  text: string,
  entities: ReadonlySet<PiiEntity>,
  minScore: number = DEFAULT_MIN_SCORE,
): PiiEntity[] {
  const wanted = entityMask(entities);
  if (wanted === 0 || text.length === 0) return [];
  const c = new Collector(text, wanted, minScore, phoneChecks());
  scan(c, wanted);
  c.flush();
  return PII_ENTITIES.filter((e: PiiEntity) => (c.found & B[e]) !== 0);
}
