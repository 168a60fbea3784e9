import { describe, expect, it } from 'vitest';
import { canonicalLocale, normaliseTimeZone } from './intl-validation.js';

describe('locale and time-zone validation', () => {
  it.each([
    ['en', 'en'],
    ['en-gb', 'en-GB'],
    ['DE-ch', 'de-CH'],
    ['zh-hant-tw', 'zh-Hant-TW'],
    ['sr-Latn-RS', 'sr-Latn-RS'],
  ])('accepts the BCP 47 tag %s in canonical form %s', (input, canonical) => {
    expect(canonicalLocale(input)).toBe(canonical);
  });

  it.each(['', 'en_US', 'english please', 'e', '123', 'en-', 'de-DE-u-co-phonebk-ca-gregory-nu-latn-hc-h23'])(
    'refuses %j as a locale',
    (input) => {
      expect(canonicalLocale(input)).toBeUndefined();
    },
  );

  it.each([
    ['UTC', 'UTC'],
    ['Europe/Paris', 'Europe/Paris'],
    ['europe/paris', 'Europe/Paris'],
    ['utc', 'UTC'],
    ['America/Argentina/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
    ['Asia/Kolkata', 'Asia/Kolkata'],
    ['US/Eastern', 'US/Eastern'],
    ['Etc/GMT+5', 'Etc/GMT+5'],
  ])('accepts the IANA zone %s and stores %s', (input, canonical) => {
    expect(normaliseTimeZone(input)).toBe(canonical);
  });

  it.each(['', 'Mars/Olympus_Mons', '+01:00', '-0500', 'Europe/../Paris', 'Europe/Paris ', 'x'.repeat(65)])(
    'refuses %j as a time zone',
    (input) => {
      expect(normaliseTimeZone(input)).toBeUndefined();
    },
  );
});
