import { describe, expect, it } from 'vitest';
import { detectPii, piiTypesIn } from './detect.js';
import { DEFAULT_MIN_SCORE, PII_ENTITIES, type PiiEntity } from './entities.js';
import { PHONE_CHECK_BUDGET } from './phone.js';

const ALL = new Set(PII_ENTITIES);

/** The matches of `text` as `entity:value`. */
function found(text: string, entities: ReadonlySet<PiiEntity> = ALL, minScore?: number): string[] {
  return detectPii(text, entities, minScore).map((m) => `${m.entity}:${text.slice(m.start, m.end)}`);
}

describe('detectPii: payment cards', () => {
  it.each([
    ['Karte 4111 1111 1111 1111 bitte belasten.', '4111 1111 1111 1111'],
    ['paid with 378282246310005 yesterday', '378282246310005'],
    ['Mastercard 5555-5555-5555-4444.', '5555-5555-5555-4444'],
    ['Amex 3782 822463 10005', '3782 822463 10005'],
    ['JCB 3530111333300000', '3530111333300000'],
  ])('finds the card in %j', (text, value) => {
    expect(found(text)).toEqual([`creditCard:${value}`]);
  });

  it('needs a card word for a compact 13- or 14-digit number (an EAN-13 barcode is not a card)', () => {
    expect(found('Barcode 4006381333931 on the box')).toEqual([]);
    expect(found('My Diners card 30569309025904.')).toEqual(['creditCard:30569309025904']);
  });

  it('ignores Luhn-failing 16-digit order numbers', () => {
    expect(found('Order 4111 1111 1111 1112 shipped')).toEqual([]);
    expect(found('Bestellnummer 5555555555554445')).toEqual([]);
  });

  it('ignores a number split across lines and one inside a longer run', () => {
    expect(found('Card 4111 1111\n1111 1111')).toEqual([]);
    expect(found('ref 94001111111111111111 done')).toEqual([]);
  });
});

describe('detectPii: IBAN', () => {
  it.each([
    'GB82 WEST 1234 5698 7654 32',
    'DE89370400440532013000',
    'de89 3704 0044 0532 0130 00',
    'FR14 2004 1010 0505 0001 3M02 606',
    'NL91ABNA0417164300',
  ])('finds %s', (iban) => {
    expect(found(`Please refund to ${iban}.`)).toEqual([`iban:${iban}`]);
  });

  it('ignores IBAN-shaped strings with a wrong check, a wrong length or split across lines', () => {
    expect(found('IBAN DE88 3704 0044 0532 0130 00')).toEqual([]);
    expect(found('IBAN DE89 3704 0044 0532 0130 0')).toEqual([]);
    expect(found('IBAN DE89 3704 0044\n0532 0130 00')).toEqual([]);
  });
});

describe('detectPii: e-mail', () => {
  it('finds addresses with their exact span', () => {
    expect(found('Write to john.doe+shop@mail.example.com.')).toEqual([
      'email:john.doe+shop@mail.example.com',
    ]);
    expect(found('<anna-lena.müller@beispiel.de>')).toEqual(['email:anna-lena.müller@beispiel.de']);
  });

  it('ignores what only looks like one', () => {
    expect(found('@mention foo@bar node@20.1.0 a@b.c x@-y.com ..@x.com a..b@x.com')).toEqual([]);
  });
});

describe('detectPii: phone numbers', () => {
  it.each([
    ['Call +49 151 23456789 today', '+49 151 23456789'],
    ['Tel. 030 12345678', '030 12345678'],
    ['(415) 555-2671 is my number', '(415) 555-2671'],
    ['+1 (415) 555-2671', '+1 (415) 555-2671'],
    ['Portable : 06 12 34 56 78', '06 12 34 56 78'],
    ['Tél. 06.12.34.56.78', '06.12.34.56.78'],
    ['+44 (0)20 7946 0958', '+44 (0)20 7946 0958'],
    ['0044 20 7946 0958', '0044 20 7946 0958'],
  ])('finds the number in %j', (text, value) => {
    expect(found(text)).toEqual([`phone:${value}`]);
  });

  it('needs a phone word for an unseparated national number', () => {
    expect(found('Bestellung 0612345678 ist unterwegs')).toEqual([]);
    expect(found('Rufen Sie mich an: 0612345678')).toEqual(['phone:0612345678']);
  });

  it('ignores timestamps, dates, versions and invalid numbers', () => {
    expect(found('at 20261127211954 and 2026-11-27 21:19:54, on 27.11.2026')).toEqual([]);
    expect(found('after the update to 18.16.3874.242')).toEqual([]);
    expect(found('Tel. +49 0000 000')).toEqual([]);
  });
});

describe('detectPii: IP addresses', () => {
  it.each([
    '192.168.1.20',
    '8.8.8.8',
    '2001:db8::1',
    '::1',
    'fe80::1ff:fe23:4567:890a',
    '::ffff:192.0.2.128',
    '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
  ])('finds %s', (ip) => {
    expect(found(`login from ${ip} failed`)).toEqual([`ipAddress:${ip}`]);
  });

  it('ignores octets over 255, leading zeros, longer dotted numbers and times', () => {
    expect(found('256.1.1.1 01.2.3.4 1.2.3.4.5 at 12:30:45 or 00:1A:2B:3C:4D:5E')).toEqual([]);
  });

  it('takes a dotted number after a version word for a version', () => {
    expect(found('version 1.2.3.4')).toEqual([]);
    expect(found('IP 1.2.3.4')).toEqual(['ipAddress:1.2.3.4']);
  });
});

describe('detectPii: national identifiers', () => {
  it('finds a dashed SSN, and an unseparated one only with a label', () => {
    expect(found('SSN 536-22-1234')).toEqual(['usSsn:536-22-1234']);
    expect(found('536-22-1234')).toEqual(['usSsn:536-22-1234']);
    expect(found('My social security number is 536221234.')).toEqual(['usSsn:536221234']);
    expect(found('Reference 536221234')).toEqual([]);
  });

  it.each([
    '000-12-3456',
    '666-12-3456',
    '900-12-3456',
    '123-00-4567',
    '123-45-0000',
    '078-05-1120',
    '219-09-9999',
  ])('rejects the never-issued SSN %s', (ssn) => expect(found(`SSN ${ssn}`, new Set(['usSsn']))).toEqual([]));

  it('finds a NINO compact or spaced, and not the QQ example prefix nor a barred one', () => {
    expect(found('NI number AB123456C')).toEqual(['ukNino:AB123456C']);
    expect(found('NINO AB 12 34 56 C.')).toEqual(['ukNino:AB 12 34 56 C']);
    expect(found('QQ123456C, BG123456A, GB123456A, AB123456E, DA123456A, AO123456A')).toEqual([]);
  });

  it('finds the German tax id with its label only', () => {
    expect(found('Steuer-ID: 86095742719')).toEqual(['deTaxId:86095742719']);
    expect(found('IdNr. 86 095 742 719')).toEqual(['deTaxId:86 095 742 719']);
    expect(found('Kundennummer 86095742719')).toEqual([]);
  });

  it('finds NIRs, with Corsica', () => {
    expect(found('NIR 1 84 12 76 451 089 46')).toEqual(['frNir:1 84 12 76 451 089 46']);
    expect(found('255081416802538')).toEqual(['frNir:255081416802538']);
    const corsica = `269052A123456${String(97 - Number(2690519123456n % 97n)).padStart(2, '0')}`;
    expect(found(`n° sécu ${corsica}`)).toEqual([`frNir:${corsica}`]);
    expect(found('1 84 12 76 451 089 47')).toEqual([]);
  });

  it('finds DNIs and NIEs with the right letter only', () => {
    expect(found('DNI 12345678Z, NIE X1234567L, 12345678-Z, X-1234567-L')).toEqual([
      'esDni:12345678Z',
      'esDni:X1234567L',
      'esDni:12345678-Z',
      'esDni:X-1234567-L',
    ]);
    expect(found('12345678A X1234567A')).toEqual([]);
  });

  it('finds codici fiscali, with omocodia', () => {
    expect(found('CF RSSMRA85T10A562S e MRTMTT25D09F205Z')).toEqual([
      'itFiscalCode:RSSMRA85T10A562S',
      'itFiscalCode:MRTMTT25D09F205Z',
    ]);
    // The last digit 2 replaced by its omocodia letter N; the check letter H computed by the odd/even tables.
    expect(found('codice fiscale RSSMRA85T10A56NH')).toEqual(['itFiscalCode:RSSMRA85T10A56NH']);
    expect(found('RSSMRA85T10A562T RssMra85T10A562S')).toEqual([]);
  });

  it('finds a BSN and a PESEL with their labels only', () => {
    expect(found('BSN: 111222333')).toEqual(['nlBsn:111222333']);
    expect(found('burgerservicenummer 1234.56.782')).toEqual(['nlBsn:1234.56.782']);
    expect(found('PESEL 44051401359')).toEqual(['plPesel:44051401359']);
    expect(found('Klantnummer 123456782, faktura 44051401359')).toEqual([]);
  });
});

describe('detectPii: a value right after another number', () => {
  // The run read from the number before (`42 4111 1111 1111 1111`) fails as a whole; the value is read on its own.
  it.each([
    ['10:42 4111 1111 1111 1111', 'creditCard:4111 1111 1111 1111'],
    ['Invoice 2024 4111111111111111', 'creditCard:4111111111111111'],
    ['Am 27.11.2026 4111 1111 1111 1111 belastet', 'creditCard:4111 1111 1111 1111'],
    ['id,amount,card\n42,1999,4111111111111111', 'creditCard:4111111111111111'],
    // 123-45-6789 is refused as the SSN of advertisements, whatever stands before it.
    ['Ticket 42 536-22-1234', 'usSsn:536-22-1234'],
    ['Zimmer 12 030 1234567 (Telefon)', 'phone:030 1234567'],
    ['Room 12, tel 030 1234567', 'phone:030 1234567'],
    ['Order 2024, IBAN DE89 3704 0044 0532 0130 00', 'iban:DE89 3704 0044 0532 0130 00'],
    ['Order 2024 DE89 3704 0044 0532 0130 00', 'iban:DE89 3704 0044 0532 0130 00'],
    ['port 22 192.168.1.20', 'ipAddress:192.168.1.20'],
  ])('finds the value in %j', (text, value) => {
    expect(found(text)).toEqual([value]);
  });

  it('needs a phone word for a phone number right after another number', () => {
    expect(found('Room 12 030 1234567')).toEqual([]);
    expect(found('Kunde 47 253 167 979')).toEqual([]);
    expect(found('Ref 12 00 49 76 26 04 22 07')).toEqual([]);
  });

  it('takes no value from the tail groups of a number that failed its check', () => {
    // A wrong IBAN check: no card nor phone number in its digit groups (`2402 9568 4129 0102` passes Luhn).
    expect(found('IBAN DE88 3704 0044 0532 0130 00')).toEqual([]);
    expect(found('IBAN ES71 6900 2402 9568 4129 0102')).toEqual([]);
    // One number printed in equal groups, an Amex-shaped order number failing Luhn, a split card.
    expect(found('Ref 1234 2402 9568 4129 0102')).toEqual([]);
    expect(found('Bestellung 3431 055127 43902')).toEqual([]);
    expect(found('Order 4111 1111 1111 1112 shipped')).toEqual([]);
    expect(found('Card 4111 1111\n1111 1111')).toEqual([]);
    // Dates, versions and times keep their tails.
    expect(found('2026-11-27 0612345678 1.2.3.4.5 12:30:45')).toEqual([]);
  });
});

describe('detectPii: scores and overlaps', () => {
  it('gives a label only to the value it names', () => {
    expect(found('BSN 123456782, klantnummer 111222333')).toEqual(['nlBsn:123456782']);
  });

  it('keeps one match per span, the label deciding between types', () => {
    // 123456782 passes the BSN's 11-test and is a valid Polish phone number.
    const both = new Set<PiiEntity>(['phone', 'nlBsn']);
    expect(found('Tel. 123456782', both)).toEqual(['phone:123456782']);
    expect(found('Mijn BSN: 123456782', both)).toEqual(['nlBsn:123456782']);
    expect(found('Nummer 123456782', both)).toEqual([]);
  });

  it('honours minScore and the entity set', () => {
    expect(found('123456782', new Set(['nlBsn']))).toEqual([]);
    expect(found('123456782', new Set(['nlBsn']), 0.3)).toEqual(['nlBsn:123456782']);
    expect(found('a@b.de 4111111111111111', new Set(['email']))).toEqual(['email:a@b.de']);
    expect(detectPii('a@b.de', new Set())).toEqual([]);
  });

  it('returns matches sorted by start, within [0, 1], at or above the threshold', () => {
    const text = 'IBAN DE89 3704 0044 0532 0130 00, mail a@b.de, BSN 123456782, IP 10.0.0.1';
    const matches = detectPii(text, ALL);
    expect(matches.map((m) => m.entity)).toEqual(['iban', 'email', 'nlBsn', 'ipAddress']);
    for (const m of matches) expect(m.score).toBeGreaterThanOrEqual(DEFAULT_MIN_SCORE);
    for (const m of matches) expect(m.score).toBeLessThanOrEqual(1);
  });
});

describe('piiTypesIn', () => {
  const texts = [
    'IBAN DE89 3704 0044 0532 0130 00, mail a@b.de, BSN 123456782, IP 10.0.0.1',
    'Tel. 123456782 and BSN 111222333 then +49 151 23456789',
    'nothing here 2026-11-27',
    `${'x '.repeat(100)}a@b.de ${'y '.repeat(100)}4111 1111 1111 1111`,
    '10:42 4111 1111 1111 1111, Ticket 42 536-22-1234, port 22 192.168.1.20',
  ];

  it.each(texts)('gives the distinct types of detectPii for %j', (text) => {
    const types = [...new Set(detectPii(text, ALL).map((m) => m.entity))];
    expect(piiTypesIn(text, ALL).sort()).toEqual(types.sort());
    for (const e of PII_ENTITIES) {
      const one = new Set([e]);
      expect(piiTypesIn(text, one)).toEqual(detectPii(text, one).length > 0 ? [e] : []);
    }
  });
});

describe('phone validation budget', () => {
  // Distinct numbers that fit the German plan's shape but not its numbering (no area code starts with 0): each costs
  // one check.
  const invalid = (count: number, from = 1000) =>
    Array.from({ length: count }, (_, i) => `Tel. +49 0000 ${from + i}`);

  it('validates a repeated number once: a repeated invalid one is never reported', () => {
    const text = 'Tel. +49 0000 1234\n'.repeat(PHONE_CHECK_BUDGET + 50);
    expect(detectPii(text, new Set(['phone']))).toEqual([]);
  });

  it('reports candidates unchecked once the budget is spent', () => {
    const text = invalid(PHONE_CHECK_BUDGET + 50).join('\n');
    const matches = found(text, new Set(['phone']));
    expect(matches).toHaveLength(50);
    expect(matches[0]).toBe(`phone:+49 0000 ${1000 + PHONE_CHECK_BUDGET}`);
    // Each call has its own budget.
    expect(found(invalid(1).join(''), new Set(['phone']))).toEqual([]);
  });
});
