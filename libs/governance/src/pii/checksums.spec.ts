import { describe, expect, it } from 'vitest';
import {
  bsnValid,
  deTaxIdValid,
  digitsOf,
  dniLetter,
  fiscalCodeCheckChar,
  ibanChecksumValid,
  iso7064Mod11_10Valid,
  luhnValid,
  nirKey,
  peselValid,
} from './checksums.js';

const compact = (s: string) => s.replace(/ /g, '');

describe('luhnValid', () => {
  it.each([
    '4111111111111111',
    '378282246310005',
    '5555555555554444',
    '6011111111111117',
    '3530111333300000',
    '79927398713',
  ])('accepts the published test number %s', (n) => expect(luhnValid(digitsOf(n))).toBe(true));

  it.each(['4111111111111112', '378282246310006', '79927398710'])('rejects %s, one digit off', (n) =>
    expect(luhnValid(digitsOf(n))).toBe(false),
  );
});

describe('ibanChecksumValid (ISO 13616 mod 97)', () => {
  // Examples of the SWIFT IBAN registry.
  it.each([
    'GB82 WEST 1234 5698 7654 32',
    'DE89 3704 0044 0532 0130 00',
    'GB29 NWBK 6016 1331 9268 19',
    'NL91 ABNA 0417 1643 00',
    'FR14 2004 1010 0505 0001 3M02 606',
    'CH93 0076 2011 6238 5295 7',
    'BE68 5390 0754 7034',
    'NO93 8601 1117 947',
    'MT84 MALT 0110 0001 2345 MTLC AST0 01S',
    'ES91 2100 0418 4502 0005 1332',
    'IT60 X054 2811 1010 0000 0123 456',
    'PL61 1090 1014 0000 0712 1981 2874',
    'AT61 1904 3002 3457 3201',
  ])('accepts %s', (iban) => expect(ibanChecksumValid(compact(iban))).toBe(true));

  it.each(['GB82 WEST 1234 5698 7654 33', 'DE88 3704 0044 0532 0130 00', 'NL91 ABNA 0417 1643 01'])(
    'rejects %s (one character changed)',
    (iban) => expect(ibanChecksumValid(compact(iban))).toBe(false),
  );
});

describe('ISO 7064 MOD 11,10 and the German tax id', () => {
  // The scheme's vectors in python-stdnum and stdnum-js (util/iso7064).
  it('checks the generic vectors', () => {
    expect(iso7064Mod11_10Valid(digitsOf('794623'))).toBe(true);
    expect(iso7064Mod11_10Valid(digitsOf('002006673085'))).toBe(true);
    expect(iso7064Mod11_10Valid(digitsOf('00200667308'))).toBe(false);
  });

  it('accepts the IdNr 86095742719 (the BZSt example)', () => {
    expect(deTaxIdValid(digitsOf('86095742719'))).toBe(true);
  });

  it('rejects a wrong check digit and a leading zero', () => {
    expect(deTaxIdValid(digitsOf('86095742718'))).toBe(false);
    expect(deTaxIdValid(digitsOf('06095742719'))).toBe(false);
  });

  /** Appends the MOD 11,10 check digit, computed here from the ISO 7064 definition. */
  const withCheck = (body: string) => {
    let product = 10;
    for (const ch of body) {
      let sum = (Number(ch) + product) % 10;
      if (sum === 0) sum = 10;
      product = (sum * 2) % 11;
    }
    return body + String((11 - product) % 10);
  };

  it('applies the digit-repetition rule even when the check digit is right', () => {
    expect(deTaxIdValid(digitsOf(withCheck('1234567890')))).toBe(false); // no digit repeated
    expect(deTaxIdValid(digitsOf(withCheck('1123456789')))).toBe(true); // one digit twice
    expect(deTaxIdValid(digitsOf(withCheck('1121345678')))).toBe(true); // one digit three times, not in a row
    expect(deTaxIdValid(digitsOf(withCheck('1112345678')))).toBe(false); // three in a row
    expect(deTaxIdValid(digitsOf(withCheck('1122345678')))).toBe(false); // two digits repeated
  });
});

describe('bsnValid (11-test)', () => {
  it('accepts 111222333 and 123456782', () => {
    expect(bsnValid(digitsOf('111222333'))).toBe(true);
    expect(bsnValid(digitsOf('123456782'))).toBe(true);
  });

  it('rejects 123456789 and 000000000', () => {
    expect(bsnValid(digitsOf('123456789'))).toBe(false);
    expect(bsnValid(digitsOf('000000000'))).toBe(false);
  });
});

describe('peselValid', () => {
  it('accepts 44051401359 and 02070803628', () => {
    expect(peselValid(digitsOf('44051401359'))).toBe(true);
    expect(peselValid(digitsOf('02070803628'))).toBe(true);
  });

  it('rejects a wrong check digit', () => {
    expect(peselValid(digitsOf('44051401358'))).toBe(false);
  });

  /** Appends the check digit, computed here with the weights 1, 3, 7, 9. */
  const withCheck = (body: string) => {
    const w = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];
    const sum = [...body].reduce((s, ch, i) => s + Number(ch) * w[i]!, 0);
    return body + String((10 - (sum % 10)) % 10);
  };

  it('requires a real date, with the century in the month', () => {
    expect(peselValid(digitsOf(withCheck('0022290123')))).toBe(true); // 2000-02-29, a leap day
    expect(peselValid(digitsOf(withCheck('0122290123')))).toBe(false); // 2001-02-29
    expect(peselValid(digitsOf(withCheck('9013010123')))).toBe(false); // month 13
    expect(peselValid(digitsOf(withCheck('9004310123')))).toBe(false); // 31 April
  });
});

describe('nirKey', () => {
  it('computes the keys of the published examples', () => {
    expect(nirKey('1841276451089')).toBe(46);
    expect(nirKey('2550814168025')).toBe(38);
  });

  it('reads Corsica 2A as 19 and 2B as 18', () => {
    expect(nirKey('269052A123456')).toBe(97 - Number(2690519123456n % 97n));
    expect(nirKey('269052B123456')).toBe(97 - Number(2690518123456n % 97n));
  });

  it('refuses a malformed number', () => {
    expect(nirKey('12345')).toBe(-1);
    expect(nirKey('1841276X51089')).toBe(-1);
  });
});

describe('dniLetter', () => {
  it('gives Z for 12345678 (DNI 12345678Z) and L for 1234567 (NIE X1234567L)', () => {
    expect(dniLetter(12345678)).toBe('Z');
    expect(dniLetter(1234567)).toBe('L');
  });
});

describe('fiscalCodeCheckChar', () => {
  it('gives the check letters of RSSMRA85T10A562S and MRTMTT25D09F205Z', () => {
    expect(fiscalCodeCheckChar('RSSMRA85T10A562')).toBe('S');
    expect(fiscalCodeCheckChar('MRTMTT25D09F205')).toBe('Z');
  });

  it('refuses a malformed input', () => {
    expect(fiscalCodeCheckChar('RSSMRA85T10A56')).toBe('');
    expect(fiscalCodeCheckChar('RSSMRA85T10A56-')).toBe('');
  });
});
