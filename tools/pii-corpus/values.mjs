// Value generators of the PII corpus: each produces a value with a valid check (computed here, independently of the
// library under test), printed in one of the formats people use, and the hard negatives (values that look like PII
// but fail its check). Randomness comes only from the seeded faker instance passed in (`r`), so the output is
// deterministic.

const digitString = (r, n) => Array.from({ length: n }, () => r.number.int(9)).join('');
const pick = (r, list) => r.helpers.arrayElement(list);
const chance = (r, p) => r.number.float() < p;

/** Luhn check digit of a digit string (the check digit appended makes the number valid). */
export function luhnDigit(body) {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let v = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      v *= 2;
      if (v > 9) v -= 9;
    }
    sum += v;
  }
  return String((10 - (sum % 10)) % 10);
}

function groupDigits(s, sizes, sep) {
  const out = [];
  let at = 0;
  for (const size of sizes) {
    out.push(s.slice(at, at + size));
    at += size;
  }
  if (at < s.length) out.push(s.slice(at));
  return out.filter(Boolean).join(sep);
}

const CARD_BRANDS = [
  { weight: 40, prefix: () => '4', length: 16 },
  { weight: 25, prefix: (r) => String(r.number.int({ min: 51, max: 55 })), length: 16 },
  { weight: 8, prefix: (r) => String(r.number.int({ min: 2221, max: 2720 })), length: 16 },
  { weight: 10, prefix: (r) => pick(r, ['34', '37']), length: 15 },
  { weight: 5, prefix: (r) => pick(r, ['6011', '65']), length: 16 },
  { weight: 4, prefix: (r) => String(r.number.int({ min: 3528, max: 3589 })), length: 16 },
  { weight: 3, prefix: (r) => pick(r, ['36', '38']), length: 14 },
  { weight: 3, prefix: (r) => pick(r, ['6759', '5018', '6304']), length: 19 },
  { weight: 2, prefix: () => '62', length: 16 },
];

function cardDigits(r) {
  const brand = r.helpers.weightedArrayElement(CARD_BRANDS.map((b) => ({ weight: b.weight, value: b })));
  const prefix = brand.prefix(r);
  const body = prefix + digitString(r, brand.length - prefix.length - 1);
  return body + luhnDigit(body);
}

function printCard(r, digits) {
  const n = digits.length;
  const sizes = n === 15 ? [4, 6, 5] : n === 14 ? [4, 6, 4] : [4, 4, 4, 4, 4];
  const style = r.number.float();
  if (style < 0.5) return groupDigits(digits, sizes, ' ');
  if (style < 0.62) return groupDigits(digits, sizes, '-');
  return digits;
}

/** A card number (issuer prefix and length, Luhn-valid), grouped by spaces or dashes or compact. */
export function creditCard(r) {
  return printCard(r, cardDigits(r));
}

/** A 16-digit order number that looks like a card but fails Luhn. */
export function luhnFailingNumber(r) {
  const digits = cardDigits(r);
  const last = (Number(digits.at(-1)) + r.number.int({ min: 1, max: 9 })) % 10;
  return printCard(r, digits.slice(0, -1) + last);
}

/** An EAN-13 product code (GS1 check digit, German prefix 40–44): a 13-digit number that is not a card. */
export function ean13(r) {
  const body = String(r.number.int({ min: 40, max: 44 })) + digitString(r, 10);
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(body[i]) * (i % 2 === 0 ? 1 : 3);
  return body + String((10 - (sum % 10)) % 10);
}

function mod97(numeric) {
  let r = 0;
  for (const ch of numeric) r = (r * 10 + Number(ch)) % 97;
  return r;
}

const letterValue = (ch) => (/[A-Z]/.test(ch) ? String(ch.charCodeAt(0) - 55) : ch);

/** BBAN shapes: n digits, a upper-case letters, c alphanumerics (simplified from the SWIFT registry). */
const BBAN = {
  DE: [['n', 18]],
  AT: [['n', 16]],
  CH: [['n', 17]],
  FR: [
    ['n', 10],
    ['c', 11],
    ['n', 2],
  ],
  BE: [['n', 12]],
  ES: [['n', 20]],
  IT: [
    ['a', 1],
    ['n', 10],
    ['c', 12],
  ],
  NL: [
    ['a', 4],
    ['n', 10],
  ],
  PL: [['n', 24]],
  GB: [
    ['a', 4],
    ['n', 14],
  ],
  IE: [
    ['a', 4],
    ['n', 14],
  ],
  LU: [
    ['n', 3],
    ['c', 13],
  ],
  PT: [['n', 21]],
};

function bban(r, country) {
  let out = '';
  for (const [kind, n] of BBAN[country]) {
    for (let i = 0; i < n; i++) {
      if (kind === 'n' || (kind === 'c' && chance(r, 0.8))) out += String(r.number.int(9));
      else out += String.fromCharCode(65 + r.number.int(25));
    }
  }
  return out;
}

/** A compact IBAN of `country` with its ISO 13616 check digits. */
export function ibanCompact(r, country) {
  const b = bban(r, country);
  const numeric = [...(b + country + '00')].map(letterValue).join('');
  const check = String(98 - mod97(numeric)).padStart(2, '0');
  return country + check + b;
}

function printIban(r, compact) {
  const style = r.number.float();
  if (style < 0.6) return compact.replace(/(.{4})(?=.)/g, '$1 ');
  if (style < 0.95) return compact;
  return compact.replace(/(.{4})(?=.)/g, '$1 ').toLowerCase();
}

/** An IBAN of `country`, printed in groups of four (most), compact, or in lower case. */
export function iban(r, country) {
  return printIban(r, ibanCompact(r, country));
}

/** An IBAN-shaped string whose check fails: one character of a valid IBAN changed (mod 97 catches every one). */
export function ibanWrongCheck(r, country) {
  const compact = ibanCompact(r, country);
  const at = r.number.int({ min: 2, max: compact.length - 1 });
  const ch = compact[at];
  const replaced = /[0-9]/.test(ch)
    ? String((Number(ch) + r.number.int({ min: 1, max: 9 })) % 10)
    : ch === 'A'
      ? 'B'
      : 'A';
  return printIban(r, compact.slice(0, at) + replaced + compact.slice(at + 1));
}

/** A US SSN outside the never-issued ranges, mostly `AAA-GG-SSSS`. */
export function usSsn(r, style = r.number.float()) {
  let area;
  do area = r.number.int({ min: 1, max: 899 });
  while (area === 666);
  const group = r.number.int({ min: 1, max: 99 });
  const serial = r.number.int({ min: 1, max: 9999 });
  const parts = [
    String(area).padStart(3, '0'),
    String(group).padStart(2, '0'),
    String(serial).padStart(4, '0'),
  ];
  if (['078-05-1120', '219-09-9999', '123-45-6789'].includes(parts.join('-'))) return usSsn(r, style);
  if (style < 0.8) return parts.join('-');
  if (style < 0.85) return parts.join(' ');
  return parts.join('');
}

const NINO_FIRST = 'ABCEGHJKLMNOPRSTWXYZ';
const NINO_SECOND = 'ABCEGHJKLMNPRSTWXYZ';

/** A UK National Insurance number with an admissible prefix. */
export function ukNino(r) {
  let prefix;
  do prefix = pick(r, [...NINO_FIRST]) + pick(r, [...NINO_SECOND]);
  while (['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'].includes(prefix));
  const digits = digitString(r, 6);
  const suffix = pick(r, ['A', 'B', 'C', 'D']);
  const style = r.number.float();
  if (style < 0.4)
    return `${prefix} ${digits.slice(0, 2)} ${digits.slice(2, 4)} ${digits.slice(4)} ${suffix}`;
  if (style < 0.9) return prefix + digits + suffix;
  return `${prefix} ${digits} ${suffix}`;
}

function mod11_10(body) {
  let product = 10;
  for (const ch of body) {
    let sum = (Number(ch) + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  return String((11 - product) % 10);
}

function idnrDigitsOk(first10) {
  if (first10[0] === '0') return false;
  const counts = {};
  for (const ch of first10) counts[ch] = (counts[ch] ?? 0) + 1;
  const repeated = Object.entries(counts).filter(([, c]) => c > 1);
  if (repeated.length !== 1 || repeated[0][1] > 3) return false;
  return !(repeated[0][1] === 3 && first10.includes(repeated[0][0].repeat(3)));
}

/** A German Steuerliche Identifikationsnummer: the digit rule and the ISO 7064 MOD 11,10 check digit. */
export function deTaxId(r) {
  let body;
  do body = digitString(r, 10);
  while (!idnrDigitsOk(body));
  const id = body + mod11_10(body);
  return chance(r, 0.15) ? `${id.slice(0, 2)} ${id.slice(2, 5)} ${id.slice(5, 8)} ${id.slice(8)}` : id;
}

/** A French NIR with its key (97 − number mod 97; Corsica 2A/2B as 19/18). */
export function frNir(r) {
  const sex = pick(r, ['1', '2']);
  const yy = digitString(r, 2);
  const mm = String(r.number.int({ min: 1, max: 12 })).padStart(2, '0');
  const dept = chance(r, 0.05)
    ? pick(r, ['2A', '2B'])
    : String(r.number.int({ min: 1, max: 95 })).padStart(2, '0');
  const commune = String(r.number.int({ min: 1, max: 999 })).padStart(3, '0');
  const order = String(r.number.int({ min: 1, max: 999 })).padStart(3, '0');
  const body = sex + yy + mm + dept + commune + order;
  const numeric = body.replace('2A', '19').replace('2B', '18');
  const key = String(97 - mod97(numeric)).padStart(2, '0');
  const style = r.number.float();
  if (style < 0.5) return [sex, yy, mm, dept, commune, order, key].join(' ');
  if (style < 0.95) return body + key;
  return `${body} ${key}`;
}

const DNI_LETTERS = 'TRWAGMYFPDXBNJZSQVHLCKE';

/** A Spanish DNI (8 digits and letter) or, one time in five, an NIE (X/Y/Z, 7 digits, letter). */
export function esDni(r) {
  if (chance(r, 0.2)) {
    const first = pick(r, ['X', 'Y', 'Z']);
    const digits = digitString(r, 7);
    const letter = DNI_LETTERS[Number(String('XYZ'.indexOf(first)) + digits) % 23];
    return chance(r, 0.8) ? first + digits + letter : `${first}-${digits}-${letter}`;
  }
  const n = r.number.int({ min: 1_000_000, max: 99_999_999 });
  const digits = String(n).padStart(8, '0');
  const letter = DNI_LETTERS[n % 23];
  const style = r.number.float();
  if (style < 0.7) return digits + letter;
  if (style < 0.9) return `${digits}-${letter}`;
  return `${digits.slice(0, 2)}.${digits.slice(2, 5)}.${digits.slice(5)}-${letter}`;
}

/** Values of 0–9 then A–Z at the odd positions of a codice fiscale. */
const CF_ODD = [
  1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16,
  10, 22, 25, 24, 23,
];
const cfOdd = (ch) => CF_ODD['0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'.indexOf(ch)];
const cfEven = (ch) => (/[0-9]/.test(ch) ? Number(ch) : ch.charCodeAt(0) - 65);

function cfPart(word, isName) {
  const letters = word
    .toUpperCase()
    .normalize('NFD')
    .replace(/[^A-Z]/g, '');
  const consonants = [...letters].filter((c) => !'AEIOU'.includes(c));
  const vowels = [...letters].filter((c) => 'AEIOU'.includes(c));
  const cons = isName && consonants.length >= 4 ? [consonants[0], consonants[2], consonants[3]] : consonants;
  return [...cons, ...vowels, 'X', 'X', 'X'].slice(0, 3).join('');
}

const BELFIORE = [
  'H501',
  'F205',
  'F839',
  'L219',
  'G273',
  'D612',
  'A944',
  'L736',
  'A662',
  'C351',
  'G224',
  'B157',
];

/** An Italian codice fiscale from a name and birth date, sometimes with omocodia, with its check letter. */
export function itFiscalCode(r, firstName, lastName) {
  const year = String(r.number.int({ min: 1940, max: 2006 })).slice(2);
  const month = 'ABCDEHLMPRST'[r.number.int(11)];
  const female = chance(r, 0.5);
  const day = String(r.number.int({ min: 1, max: 28 }) + (female ? 40 : 0)).padStart(2, '0');
  let body = cfPart(lastName, false) + cfPart(firstName, true) + year + month + day + pick(r, BELFIORE);
  if (chance(r, 0.03)) body = body.slice(0, 14) + 'LMNPQRSTUV'[Number(body[14])];
  let sum = 0;
  for (let i = 0; i < 15; i++) sum += i % 2 === 0 ? cfOdd(body[i]) : cfEven(body[i]);
  return body + String.fromCharCode(65 + (sum % 26));
}

/** A Dutch BSN passing the 11-test, compact or `1234.56.782` or `123 456 782`. */
export function nlBsn(r) {
  for (;;) {
    const body = String(r.number.int({ min: 1, max: 9 })) + digitString(r, 7);
    let sum = 0;
    for (let i = 0; i < 8; i++) sum += Number(body[i]) * (9 - i);
    const check = sum % 11;
    if (check === 10) continue;
    const bsn = body + check;
    const style = r.number.float();
    if (style < 0.85) return bsn;
    if (style < 0.95) return `${bsn.slice(0, 4)}.${bsn.slice(4, 6)}.${bsn.slice(6)}`;
    return `${bsn.slice(0, 3)} ${bsn.slice(3, 6)} ${bsn.slice(6)}`;
  }
}

/** A Polish PESEL of a birth date between 1940 and 2012. */
export function plPesel(r) {
  const year = r.number.int({ min: 1940, max: 2012 });
  const month = r.number.int({ min: 1, max: 12 });
  const day = r.number.int({ min: 1, max: 28 });
  const mm = month + (year >= 2000 ? 20 : 0);
  const body =
    String(year % 100).padStart(2, '0') +
    String(mm).padStart(2, '0') +
    String(day).padStart(2, '0') +
    digitString(r, 4);
  const weights = [1, 3, 7, 9, 1, 3, 7, 9, 1, 3];
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += Number(body[i]) * weights[i];
  return body + String((10 - (sum % 10)) % 10);
}

/** A random IPv4 address (public or private ranges) or, one time in four, an IPv6 address in a common notation. */
export function ipAddress(r) {
  if (chance(r, 0.75)) {
    const first = pick(r, [10, 172, 192, r.number.int({ min: 11, max: 223 })]);
    const octets = [first, r.number.int(255), r.number.int(255), r.number.int({ min: 1, max: 254 })];
    if (first === 192) octets[1] = 168;
    if (first === 172) octets[1] = r.number.int({ min: 16, max: 31 });
    return octets.join('.');
  }
  const hex = () => r.number.int(0xffff).toString(16);
  const style = r.number.float();
  if (style < 0.35) return ['2001', 'db8', hex(), hex(), '', hex()].join(':').replace(':::', '::');
  if (style < 0.6) return `fe80::${hex()}:${hex()}:${hex()}:${hex()}`;
  if (style < 0.75)
    return `::ffff:${r.number.int({ min: 11, max: 223 })}.${r.number.int(255)}.${r.number.int(255)}.${r.number.int({ min: 1, max: 254 })}`;
  return Array.from({ length: 8 }, hex).join(':');
}

/** Hard negatives that are not personal data. */
export const negatives = {
  orderNumber: (r) => luhnFailingNumber(r),
  ibanWrong: (r, country) => ibanWrongCheck(r, country),
  timestamp: (r) => {
    const d = new Date(Date.UTC(2024, 0, 1) + r.number.int(3 * 365 * 86400) * 1000);
    const iso = d.toISOString().slice(0, 19);
    return pick(r, [
      iso.replace(/[-T:]/g, ''),
      iso + 'Z',
      iso.replace('T', ' '),
      String(Math.floor(d.getTime() / 1000)),
      String(d.getTime()),
    ]);
  },
  version: (r) => {
    const n = () => r.number.int(20);
    return pick(r, [
      `${n()}.${n()}.${n()}.${n()}`,
      `${n()}.${n()}.${r.number.int({ min: 1000, max: 22000 })}.${r.number.int(4000)}`,
      `${n()}.${n()}.${n()}.${n()}.${n()}`,
      `${n()}.${n()}.${n()}`,
    ]);
  },
  tracking: (r) =>
    pick(r, [
      `1Z${digitString(r, 3)}${String.fromCharCode(65 + r.number.int(25), 65 + r.number.int(25))}${digitString(r, 11)}`,
      `JJD${digitString(r, 15)}`,
      `00340${digitString(r, 15)}`,
      groupDigits(`9400${digitString(r, 18)}`, [4, 4, 4, 4, 4], ' '),
      digitString(r, 14),
      `H${digitString(r, 19)}`,
    ]),
  random9: (r) => String(r.number.int({ min: 100_000_000, max: 999_999_999 })),
  random11: (r) => String(r.number.int({ min: 10_000_000_000, max: 99_999_999_999 })),
  ean: (r) => ean13(r),
};

export { chance, digitString, groupDigits, pick };
export { phone } from './phones.mjs';
