/**
 * Masking: each detected value replaced by `<TYPE>` (redact) or `<TYPE:hash>` (hash: the first 12 hex of an
 * HMAC-SHA-256 of the normalized value under the organization's key, so one value keeps one token across traces
 * without being readable). Counts per type go to the caller's record.
 */
import { createHmac } from 'node:crypto';
import { detectWith } from './detect.js';
import { DEFAULT_MIN_SCORE, piiLabel, type PiiEntity, type PiiMatch } from './entities.js';
import { type PhoneChecks, phoneChecks, phoneToE164 } from './phone.js';

export interface MaskOptions {
  readonly entities: ReadonlySet<PiiEntity>;
  readonly mode: 'redact' | 'hash';
  /** HMAC key, used in hash mode. */
  readonly key: Uint8Array;
  readonly minScore?: number;
}

/** JSON from the service is depth-limited well below this; deeper input is refused rather than left unmasked. */
export const MAX_JSON_DEPTH = 256;

/**
 * The value as hashed, so that one value written two ways hashes equal: e-mail lower-cased; a phone number in E.164
 * (`+49 30 1234567` and `030 1234567` are one number); an IPv6 address in its canonical form (an IPv4 one as it is:
 * without its dots 1.22.3.4 and 12.2.3.4 would be one); identifiers without spaces, dashes, dots and slashes,
 * upper-cased.
 */
export function normalizePii(entity: PiiEntity, value: string, phones?: PhoneChecks): string {
  switch (entity) {
    case 'email':
      return value.toLowerCase();
    case 'phone':
      return phoneToE164(value, phones) ?? value.replace(/[^0-9+]/g, '');
    case 'ipAddress':
      return value.includes(':') ? canonicalIpv6(value) : value;
    default:
      return value.replace(/[\s./-]/g, '').toUpperCase();
  }
}

function canonicalIpv6(value: string): string {
  try {
    return new URL(`http://[${value}]/`).hostname.slice(1, -1);
  } catch {
    return value.toLowerCase();
  }
}

function replacement(text: string, m: PiiMatch, options: MaskOptions, phones: PhoneChecks): string {
  const label = piiLabel(m.entity);
  if (options.mode === 'redact') return `<${label}>`;
  const normalized = normalizePii(m.entity, text.slice(m.start, m.end), phones);
  const digest = createHmac('sha256', options.key).update(normalized).digest('hex');
  return `<${label}:${digest.slice(0, 12)}>`;
}

/**
 * redact: each match -> `<IBAN>`; hash: `<IBAN:` + first 12 hex of HMAC-SHA-256(key, normalized value) + `>`
 * (see normalizePii). Adds the count of each type to `counts`. Returns the same string instance when nothing matched.
 */
export function maskText(
  text: string,
  options: MaskOptions,
  counts: Partial<Record<PiiEntity, number>>,
): string {
  return maskWith(text, options, counts, phoneChecks());
}

/** `maskText` with the phone validations of a larger call: one budget for a JSON value's texts. */
function maskWith(
  text: string,
  options: MaskOptions,
  counts: Partial<Record<PiiEntity, number>>,
  phones: PhoneChecks,
): string {
  const matches = detectWith(text, options.entities, options.minScore ?? DEFAULT_MIN_SCORE, phones);
  if (matches.length === 0) return text;
  let out = '';
  let last = 0;
  for (const m of matches) {
    out += text.slice(last, m.start) + replacement(text, m, options, phones);
    last = m.end;
    counts[m.entity] = (counts[m.entity] ?? 0) + 1;
  }
  return out + text.slice(last);
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function walk(
  value: unknown,
  options: MaskOptions,
  counts: Partial<Record<PiiEntity, number>>,
  depth: number,
  phones: PhoneChecks,
): unknown {
  if (typeof value === 'string') return maskWith(value, options, counts, phones);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_JSON_DEPTH) throw new RangeError(`maskJson: value nested deeper than ${MAX_JSON_DEPTH}`);
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const masked = walk(item, options, counts, depth + 1, phones);
      if (masked !== item) {
        copy ??= value.slice();
        copy[i] = masked;
      }
    }
    return copy ?? value;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | null = null;
  for (const key of Object.keys(value)) {
    const item = value[key];
    const masked = walk(item, options, counts, depth + 1, phones);
    if (masked !== item) {
      copy ??= { ...value };
      copy[key] = masked;
    }
  }
  return copy ?? value;
}

/**
 * Walks a JSON value (objects, arrays, strings) and masks every string value, not keys (numbers, booleans and null
 * are left as they are); returns the same instance when nothing changed, and copies only the containers on the path
 * to a change. Throws a RangeError beyond MAX_JSON_DEPTH levels.
 */
export function maskJson<T>(value: T, options: MaskOptions, counts: Partial<Record<PiiEntity, number>>): T {
  return walk(value, options, counts, 0, phoneChecks()) as T;
}
