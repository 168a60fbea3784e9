// Generates the labelled PII corpus of `npm run bench:pii`: bench/pii-corpus.jsonl, one document a line,
// `{"lang":"de","text":"...","entities":[{"type":"iban","start":12,"end":34}]}` (offsets in UTF-16 code units, end
// exclusive, as JavaScript's String#slice; every character of the corpus is in the BMP, so they are also code points).
//
// Regenerate (deterministic: fixed faker seed, no clock, no other randomness; two runs give the same file):
//   node tools/pii-corpus/generate.mjs            # writes bench/pii-corpus.jsonl
//   node tools/pii-corpus/generate.mjs --stdout   # prints it instead
//
// Documents are short support texts (e-mails, chats, tickets, agent summaries) in en, de, fr, es, it, nl and pl, built
// from the sentence templates in templates-*.mjs and values from values.mjs (valid check digits computed there).
// Shares, chosen to resemble real support traffic rather than the detectors:
// - a national id comes with a label ("Steuer-ID", "BSN", "PESEL", …) in LABELLED_ID_SHARE (98 %) of its occurrences:
//   ids are nearly always written next to their name; the other 2 % are bare ("Name, id, city") and, for the weakly
//   checked ones (BSN, PESEL, IdNr, unseparated SSN), undetectable without guessing: they bound those types' recall;
// - e-mail addresses, phone numbers, IBANs, cards and IP addresses are bare in 20–30 % (LABELLED_SHARE);
// - hard negatives (never labelled) in 60 % of the documents: Luhn-failing 16-digit order numbers, IBAN-shaped strings
//   with a wrong check, timestamps, version numbers, tracking codes, random 9- and 11-digit customer and invoice
//   numbers, EAN-13 product codes; and in 5 % an IBAN or card number broken across two lines (not phone numbers: the
//   half after the break of `+48\n22 097 69 11` is itself a phone number as people print it).
// Only true positives are labelled.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  base,
  de as fDe,
  de_AT,
  de_CH,
  en as fEn,
  en_GB,
  en_IE,
  en_US,
  es as fEs,
  Faker,
  fr as fFr,
  fr_BE,
  it as fIt,
  nl as fNl,
  nl_BE,
  pl as fPl,
} from '@faker-js/faker';
import * as v from './values.mjs';
import { de, en, fr } from './templates-en-de-fr.mjs';
import { es, it, nl, pl } from './templates-es-it-nl-pl.mjs';

const SEED = 20_261_127;
const DOCS = 4800;
const LABELLED_ID_SHARE = 0.98;
const LABELLED_SHARE = { email: 0.7, phone: 0.75, iban: 0.8, card: 0.8, ip: 0.8 };
const ENTITY_TYPE = { email: 'email', phone: 'phone', iban: 'iban', card: 'creditCard', ip: 'ipAddress' };
const ID_TYPE = {
  US: 'usSsn',
  GB: 'ukNino',
  DE: 'deTaxId',
  FR: 'frNir',
  ES: 'esDni',
  IT: 'itFiscalCode',
  NL: 'nlBsn',
  PL: 'plPesel',
};

const r = new Faker({ locale: [base] });
r.seed(SEED);

const fakerOf = (...locales) => {
  const f = new Faker({ locale: [...locales, fEn, base] });
  f.seed(SEED + locales.length);
  return f;
};

/** Per language: templates, faker, regions (phone and IBAN country, national id) with weights, labels for summaries. */
const LANGS = {
  en: {
    t: en,
    weight: 22,
    regions: [
      { weight: 45, phone: 'US', iban: null, id: 'US', f: fakerOf(en_US) },
      { weight: 40, phone: 'GB', iban: 'GB', id: 'GB', f: fakerOf(en_GB) },
      { weight: 15, phone: 'IE', iban: 'IE', id: null, f: fakerOf(en_IE) },
    ],
    kv: {
      email: 'Email',
      phone: 'Phone',
      iban: 'IBAN',
      card: 'Card',
      ip: 'IP address',
      US: 'SSN',
      GB: 'NI number',
    },
    date: (d) => `${d.getUTCMonth() + 1}/${d.getUTCDate()}/${d.getUTCFullYear()}`,
    amount: (x) => `$${x.toFixed(2)}`,
  },
  de: {
    t: de,
    weight: 14,
    regions: [
      { weight: 70, phone: 'DE', iban: 'DE', id: 'DE', f: fakerOf(fDe) },
      { weight: 15, phone: 'AT', iban: 'AT', id: 'DE', f: fakerOf(de_AT, fDe) },
      { weight: 15, phone: 'CH', iban: 'CH', id: 'DE', f: fakerOf(de_CH, fDe) },
    ],
    kv: {
      email: 'E-Mail',
      phone: 'Telefon',
      iban: 'IBAN',
      card: 'Kreditkarte',
      ip: 'IP-Adresse',
      DE: 'Steuer-ID',
    },
    date: (d) => `${pad(d.getUTCDate())}.${pad(d.getUTCMonth() + 1)}.${d.getUTCFullYear()}`,
    amount: (x) => `${x.toFixed(2).replace('.', ',')} €`,
  },
  fr: {
    t: fr,
    weight: 13,
    regions: [
      { weight: 80, phone: 'FR', iban: 'FR', id: 'FR', f: fakerOf(fFr) },
      { weight: 20, phone: 'BE', iban: 'BE', id: 'FR', f: fakerOf(fr_BE, fFr) },
    ],
    kv: {
      email: 'E-mail',
      phone: 'Téléphone',
      iban: 'IBAN',
      card: 'Carte bancaire',
      ip: 'Adresse IP',
      FR: 'N° de sécurité sociale',
    },
    date: (d) => `${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()}`,
    amount: (x) => `${x.toFixed(2).replace('.', ',')} €`,
  },
  es: {
    t: es,
    weight: 13,
    regions: [{ weight: 1, phone: 'ES', iban: 'ES', id: 'ES', f: fakerOf(fEs) }],
    kv: { email: 'Correo', phone: 'Teléfono', iban: 'IBAN', card: 'Tarjeta', ip: 'Dirección IP', ES: 'DNI' },
    date: (d) => `${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()}`,
    amount: (x) => `${x.toFixed(2).replace('.', ',')} €`,
  },
  it: {
    t: it,
    weight: 13,
    regions: [{ weight: 1, phone: 'IT', iban: 'IT', id: 'IT', f: fakerOf(fIt) }],
    kv: {
      email: 'Email',
      phone: 'Telefono',
      iban: 'IBAN',
      card: 'Carta',
      ip: 'Indirizzo IP',
      IT: 'Codice fiscale',
    },
    date: (d) => `${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()}`,
    amount: (x) => `${x.toFixed(2).replace('.', ',')} €`,
  },
  nl: {
    t: nl,
    weight: 12,
    regions: [
      { weight: 85, phone: 'NL', iban: 'NL', id: 'NL', f: fakerOf(fNl) },
      { weight: 15, phone: 'BE', iban: 'BE', id: 'NL', f: fakerOf(nl_BE, fNl) },
    ],
    kv: { email: 'E-mail', phone: 'Telefoon', iban: 'IBAN', card: 'Creditcard', ip: 'IP-adres', NL: 'BSN' },
    date: (d) => `${pad(d.getUTCDate())}-${pad(d.getUTCMonth() + 1)}-${d.getUTCFullYear()}`,
    amount: (x) => `€ ${x.toFixed(2).replace('.', ',')}`,
  },
  pl: {
    t: pl,
    weight: 13,
    regions: [{ weight: 1, phone: 'PL', iban: 'PL', id: 'PL', f: fakerOf(fPl) }],
    kv: { email: 'E-mail', phone: 'Telefon', iban: 'IBAN', card: 'Karta', ip: 'Adres IP', PL: 'PESEL' },
    date: (d) => `${pad(d.getUTCDate())}.${pad(d.getUTCMonth() + 1)}.${d.getUTCFullYear()}`,
    amount: (x) => `${x.toFixed(2).replace('.', ',')} zł`,
  },
};

function pad(n) {
  return String(n).padStart(2, '0');
}

const weighted = (items) =>
  r.helpers.weightedArrayElement(items.map((value) => ({ weight: value.weight, value })));
const EMAIL_SHAPE = /^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/;

function email(f, person) {
  for (;;) {
    const style = r.number.float();
    let address;
    if (style < 0.6) address = f.internet.email({ firstName: person.first, lastName: person.last });
    else if (style < 0.85) {
      address = f.internet.email({
        firstName: person.first,
        lastName: person.last,
        provider: f.internet.domainName(),
      });
    } else
      address = f.internet
        .email({ firstName: person.first, lastName: person.last })
        .replace('@', `+${f.word.noun()}@`);
    if (EMAIL_SHAPE.test(address)) return address;
  }
}

/** The value of an entity placeholder. */
function entityValue(kind, region, person) {
  switch (kind) {
    case 'email':
      return email(region.f, person);
    case 'phone':
      return v.phone(r, region.phone);
    case 'iban':
      return v.iban(r, region.iban);
    case 'card':
      return v.creditCard(r);
    case 'ip':
      return v.ipAddress(r);
    default:
      return idValue(region.id, person);
  }
}

function idValue(id, person) {
  switch (id) {
    case 'US':
      return v.usSsn(r);
    case 'GB':
      return v.ukNino(r);
    case 'DE':
      return v.deTaxId(r);
    case 'FR':
      return v.frNir(r);
    case 'ES':
      return v.esDni(r);
    case 'IT':
      return v.itFiscalCode(r, person.first, person.last);
    case 'NL':
      return v.nlBsn(r);
    default:
      return v.plPesel(r);
  }
}

/** How many hard negatives of each kind the corpus holds (printed after generation). */
const negativeCounts = {};

function negativeValue(kind, region) {
  negativeCounts[kind] = (negativeCounts[kind] ?? 0) + 1;
  switch (kind) {
    case 'order':
      return v.negatives.orderNumber(r);
    case 'ibanbad':
      return v.negatives.ibanWrong(r, region.iban ?? 'DE');
    case 'ts':
      return v.negatives.timestamp(r);
    case 'ver':
      return v.negatives.version(r);
    case 'track':
      return v.negatives.tracking(r);
    case 'r9':
      return v.negatives.random9(r);
    case 'r11':
      return v.negatives.random11(r);
    case 'ean':
      return v.negatives.ean(r);
    default:
      throw new Error(`unknown negative ${kind}`);
  }
}

/** A text under construction with its labelled spans. */
class Doc {
  text = '';
  entities = [];
  add(s) {
    this.text += s;
  }
  label(type, value) {
    const start = this.text.length;
    this.text += value;
    this.entities.push({ type, start, end: this.text.length });
  }
}

/**
 * Writes `template` into `doc`: `{kind}` entity placeholders (labelled, with `values[kind]`), `{!kind}` negatives,
 * other `{name}`s from `fill`.
 */
function render(doc, template, { values = {}, region, fill }) {
  const parts = template.split(/(\{!?[a-z0-9]+\})/);
  for (const part of parts) {
    const m = /^\{(!?)([a-z0-9]+)\}$/.exec(part);
    if (!m) doc.add(part);
    else if (m[1] === '!') doc.add(negativeValue(m[2], region));
    else if (m[2] in values) doc.label(values[m[2]].type, values[m[2]].value);
    else doc.add(fill(m[2]));
  }
}

/** One entity mention: its kind, whether it carries a label, its value and corpus type. */
function mention(kind, region, person) {
  const isId = kind === 'id';
  const labelled = r.number.float() < (isId ? LABELLED_ID_SHARE : LABELLED_SHARE[kind]);
  const type = isId ? ID_TYPE[region.id] : ENTITY_TYPE[kind];
  return { kind, labelled, type, value: entityValue(kind, region, person) };
}

function sentenceFor(lang, region, m) {
  const t = LANGS[lang].t;
  const group = m.kind === 'id' ? t.ids[region.id] : t.pii[m.kind];
  return r.helpers.arrayElement(m.labelled ? group.ctx : group.bare);
}

/** A value broken across two lines (never labelled): the label is there, the value is not one any more. */
function splitSentence(lang, region) {
  const t = LANGS[lang].t;
  const kind = r.helpers.arrayElement(region.iban ? ['iban', 'card'] : ['card']);
  negativeCounts[`split ${kind}`] = (negativeCounts[`split ${kind}`] ?? 0) + 1;
  let value =
    kind === 'iban' ? v.ibanCompact(r, region.iban).replace(/(.{4})(?=.)/g, '$1 ') : v.creditCard(r);
  const spaces = [...value.matchAll(/ /g)].map((x) => x.index);
  if (spaces.length === 0) {
    const at = Math.floor(value.length / 2);
    value = `${value.slice(0, at)}\n${value.slice(at)}`;
  } else {
    const at = r.helpers.arrayElement(spaces);
    value = `${value.slice(0, at)}\n${value.slice(at + 1)}`;
  }
  return r.helpers.arrayElement(t.pii[kind].ctx).replace(`{${kind}}`, value);
}

function makeDoc() {
  const lang = weighted(Object.entries(LANGS).map(([name, l]) => ({ weight: l.weight, name }))).name;
  const L = LANGS[lang];
  const region = weighted(L.regions);
  const f = region.f;
  const person = { first: f.person.firstName(), last: f.person.lastName() };
  const fill = (name) => {
    switch (name) {
      case 'first':
        return person.first;
      case 'name':
        return `${person.first} ${person.last}`;
      case 'company':
        return f.company.name();
      case 'city':
        return f.location.city();
      case 'product':
        return f.commerce.productName();
      case 'date':
        return L.date(new Date(Date.UTC(2025, 0, 1) + r.number.int(700) * 86_400_000));
      case 'amount':
        return L.amount(r.number.int({ min: 500, max: 250_000 }) / 100);
      case 'n':
        return String(r.number.int({ min: 2, max: 14 }));
      case 'ticket':
        return String(r.number.int({ min: 10_000, max: 999_999 }));
      default:
        throw new Error(`unknown placeholder ${name}`);
    }
  };

  const kinds = [
    { weight: 18, kind: 'email' },
    { weight: 22, kind: 'phone' },
    { weight: region.iban ? 12 : 0, kind: 'iban' },
    { weight: 10, kind: 'card' },
    { weight: 8, kind: 'ip' },
    { weight: region.id ? 34 : 0, kind: 'id' },
  ].filter((k) => k.weight > 0);
  const count = weighted([
    { weight: 8, n: 0 },
    { weight: 45, n: 1 },
    { weight: 30, n: 2 },
    { weight: 13, n: 3 },
    { weight: 4, n: 4 },
  ]).n;
  const mentions = Array.from({ length: count }, () => mention(weighted(kinds).kind, region, person));
  const negatives = weighted([
    { weight: 40, n: 0 },
    { weight: 40, n: 1 },
    { weight: 20, n: 2 },
  ]).n;

  // Sentences: filler, PII, negatives, shuffled (PII and negatives keep their own order among themselves).
  const items = [];
  const fillers = r.number.int({ min: 3, max: 6 });
  for (let i = 0; i < fillers; i++) items.push({ template: r.helpers.arrayElement(L.t.filler) });
  for (const m of mentions) items.push({ template: sentenceFor(lang, region, m), mention: m });
  for (let i = 0; i < negatives; i++) items.push({ template: r.helpers.arrayElement(L.t.neg) });
  if (r.number.float() < 0.05) items.push({ template: splitSentence(lang, region) });
  const ordered = r.helpers.shuffle(items);

  const doc = new Doc();
  const style = r.number.float();
  const renderItem = (item) =>
    render(doc, item.template, {
      values: item.mention ? { [item.mention.kind]: item.mention } : {},
      region,
      fill,
    });
  if (style < 0.35) {
    render(doc, r.helpers.arrayElement(L.t.greet), { region, fill });
    doc.add('\n\n');
    ordered.forEach((item, i) => {
      if (i > 0) doc.add(i % 3 === 0 ? '\n\n' : ' ');
      renderItem(item);
    });
    doc.add('\n\n');
    render(doc, r.helpers.arrayElement(L.t.close), { region, fill });
  } else if (style < 0.6) {
    ordered.forEach((item, i) => {
      if (i > 0) doc.add('\n');
      doc.add(`${L.t.roles[item.mention ? 0 : i % 2]}: `);
      renderItem(item);
    });
  } else if (style < 0.8) {
    doc.add(`Ticket #${fill('ticket')} – ${r.helpers.arrayElement(L.t.subjects)}\n\n`);
    ordered.forEach((item, i) => {
      if (i > 0) doc.add(r.number.float() < 0.3 ? '\n' : ' ');
      renderItem(item);
    });
  } else {
    // An agent's summary: the labelled values as key-value lines, the rest as sentences.
    const lines = ordered.filter((item) => !(item.mention && item.mention.labelled));
    const kvs = ordered.filter((item) => item.mention && item.mention.labelled);
    lines.forEach((item, i) => {
      if (i > 0) doc.add(' ');
      renderItem(item);
    });
    for (const item of kvs) {
      const m = item.mention;
      doc.add(`\n- ${m.kind === 'id' ? L.kv[region.id] : L.kv[m.kind]}: `);
      doc.label(m.type, m.value);
    }
  }
  return { lang, text: doc.text, entities: doc.entities };
}

const lines = [];
for (let i = 0; i < DOCS; i++) lines.push(JSON.stringify(makeDoc()));
const out = lines.join('\n') + '\n';
if (process.argv.includes('--stdout')) process.stdout.write(out);
else {
  const path = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'pii-corpus.jsonl');
  writeFileSync(path, out);
  console.log(`wrote ${DOCS} documents, ${(Buffer.byteLength(out) / 1e6).toFixed(2)} MB, to ${path}`);
  console.log(`hard negatives: ${JSON.stringify(negativeCounts)}`);
}
