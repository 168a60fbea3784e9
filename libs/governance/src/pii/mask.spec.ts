import { describe, expect, it } from 'vitest';
import { piiLabel, PII_ENTITIES, type PiiEntity } from './entities.js';
import { maskJson, maskText, MAX_JSON_DEPTH, normalizePii, type MaskOptions } from './mask.js';
import { PHONE_CHECK_BUDGET } from './phone.js';

const ALL = new Set(PII_ENTITIES);
const KEY = new TextEncoder().encode('organization-key-0123456789abcdef');
const redact: MaskOptions = { entities: ALL, mode: 'redact', key: KEY };
const hash: MaskOptions = { entities: ALL, mode: 'hash', key: KEY };

describe('piiLabel', () => {
  it('names each type in upper snake case', () => {
    expect(piiLabel('creditCard')).toBe('CREDIT_CARD');
    expect(piiLabel('iban')).toBe('IBAN');
    expect(piiLabel('ipAddress')).toBe('IP_ADDRESS');
    expect(piiLabel('itFiscalCode')).toBe('IT_FISCAL_CODE');
    expect(PII_ENTITIES.map(piiLabel).every((l) => /^[A-Z]+(_[A-Z]+)*$/.test(l))).toBe(true);
  });
});

describe('maskText', () => {
  it('redacts each match with its label and counts the types', () => {
    const counts: Partial<Record<PiiEntity, number>> = {};
    const out = maskText(
      'IBAN DE89 3704 0044 0532 0130 00, card 4111 1111 1111 1111, mail a@b.de, b@c.de',
      redact,
      counts,
    );
    expect(out).toBe('IBAN <IBAN>, card <CREDIT_CARD>, mail <EMAIL>, <EMAIL>');
    expect(counts).toEqual({ iban: 1, creditCard: 1, email: 2 });
  });

  it('adds to the counts it is given', () => {
    const counts: Partial<Record<PiiEntity, number>> = { email: 3 };
    maskText('a@b.de', redact, counts);
    expect(counts).toEqual({ email: 4 });
  });

  it('masks only the types asked for', () => {
    const out = maskText('a@b.de 4111 1111 1111 1111', { ...redact, entities: new Set(['creditCard']) }, {});
    expect(out).toBe('a@b.de <CREDIT_CARD>');
  });

  it('returns the same string instance when nothing matched', () => {
    const text = ['no personal data', 'here'].join(' ');
    const counts = {};
    expect(maskText(text, redact, counts)).toBe(text);
    expect(counts).toEqual({});
  });

  it('hashes to the label and 12 hex digits of an HMAC, equal for one value written two ways', () => {
    const token = (text: string) => maskText(text, hash, {});
    const a = token('DE89 3704 0044 0532 0130 00');
    expect(a).toMatch(/^<IBAN:[0-9a-f]{12}>$/);
    expect(token('de89370400440532013000')).toBe(a);
    expect(token('John.Doe@Example.com')).toBe(token('john.doe@example.com'));
    expect(token('Tel. +49 151 23456789')).toBe(token('Tel. 0151 23456789'));
    expect(token('4111-1111-1111-1111')).toBe(token('4111 1111 1111 1111'));
    expect(token('NIR 1 84 12 76 451 089 46')).toBe(token('NIR 184127645108946'));
    expect(token('2001:db8:0:0:0:0:0:1')).toBe(token('2001:DB8::1'));
    expect(token('GB82 WEST 1234 5698 7654 32')).not.toBe(a);
  });

  it('hashes under the key: another key gives another token', () => {
    const other = maskText('a@b.de', { ...hash, key: new TextEncoder().encode('another-key') }, {});
    expect(other).not.toBe(maskText('a@b.de', hash, {}));
  });
});

describe('normalizePii', () => {
  it('normalizes identifiers, e-mail addresses, phone numbers and IP addresses', () => {
    expect(normalizePii('iban', 'de89 3704 0044 0532 0130 00')).toBe('DE89370400440532013000');
    expect(normalizePii('usSsn', '536-22-1234')).toBe('536221234');
    expect(normalizePii('nlBsn', '1234.56.782')).toBe('123456782');
    expect(normalizePii('email', 'John@Example.COM')).toBe('john@example.com');
    expect(normalizePii('phone', '+49 (0)30 12345678')).toBe('+493012345678');
    expect(normalizePii('ipAddress', '192.168.1.1')).toBe('192.168.1.1');
    expect(normalizePii('ipAddress', 'FE80:0:0::1')).toBe('fe80::1');
  });
});

describe('maskJson', () => {
  it('masks string values at any depth, not keys, numbers or booleans', () => {
    const value = {
      'a@b.de': 'key is an address',
      prompt: 'my mail is a@b.de',
      nested: { list: ['IBAN DE89 3704 0044 0532 0130 00', 42, true, null], card: 4111111111111111 },
    };
    const counts: Partial<Record<PiiEntity, number>> = {};
    expect(maskJson(value, redact, counts)).toEqual({
      'a@b.de': 'key is an address',
      prompt: 'my mail is <EMAIL>',
      nested: { list: ['IBAN <IBAN>', 42, true, null], card: 4111111111111111 },
    });
    expect(counts).toEqual({ email: 1, iban: 1 });
  });

  it('returns the same instances where nothing changed', () => {
    const untouched = { text: 'nothing' };
    const value = { untouched, list: ['a@b.de', 'plain'], other: ['x'] };
    const masked = maskJson(value, redact, {});
    expect(masked).not.toBe(value);
    expect(masked.untouched).toBe(untouched);
    expect(masked.other).toBe(value.other);
    expect(value.list[0]).toBe('a@b.de');
    const clean = { a: ['b', { c: 'd' }] };
    expect(maskJson(clean, redact, {})).toBe(clean);
    expect(maskJson('plain', redact, {})).toBe('plain');
  });

  it('refuses a value nested deeper than MAX_JSON_DEPTH rather than leave it unmasked', () => {
    let deep: unknown = 'a@b.de';
    for (let i = 0; i <= MAX_JSON_DEPTH; i++) deep = [deep];
    expect(() => maskJson(deep, redact, {})).toThrow(RangeError);
  });
});

describe('maskJson: phone validation budget', () => {
  it('spends one budget over all the strings of a value (each leaf does not get its own)', () => {
    // Distinct German-shaped numbers no plan accepts: one check each; beyond the budget, masked unchecked.
    const leaves = Array.from({ length: PHONE_CHECK_BUDGET + 20 }, (_, i) => `Tel. +49 0000 ${1000 + i}`);
    const counts: Partial<Record<PiiEntity, number>> = {};
    const masked = maskJson({ notes: leaves }, { ...redact, entities: new Set(['phone']) }, counts);
    expect(counts).toEqual({ phone: 20 });
    expect(masked.notes.slice(-20).every((s) => s === 'Tel. <PHONE>')).toBe(true);
    expect(leaves.slice(-20).map((s) => maskText(s, redact, {}))).toEqual(leaves.slice(-20));
  });
});
