/**
 * Context words: a label near a candidate raises its score (Presidio's context enhancement). A label of the
 * candidate's own type within CONTEXT_BEFORE characters before it (or CONTEXT_AFTER after it) adds CONTEXT_BOOST, as
 * long as no digit stands between the label and the value: a label names the next number, so in "BSN 123456782,
 * klantnummer 987654326" only the first number gets the BSN label, and in "Tel. 030 1234567, BSN 123456782" the BSN
 * is not read as a phone number. A few labels lower a type instead (a version number looks like an IPv4 address).
 * Labels are found by a scan of the window's word starts against a table keyed by their first two letters: no regular
 * expression.
 */
import { CH_AT, CH_COLON, CH_DOT, isAsciiAlnum, isWordChar } from './chars.js';
import { ENTITY_BIT, type PiiEntity } from './entities.js';

export const CONTEXT_BOOST = 0.35;
/** A score this high is final: labels are not looked for (the boost would only round it up to 1). */
export const CONTEXT_FINAL = 0.9;
export const CONTEXT_PENALTY = 0.35;
export const CONTEXT_BEFORE = 40;
export const CONTEXT_AFTER = 25;

/**
 * Labels per type, lower case, in en, de, fr, es, it, nl and pl, `|`-separated. `word*` matches a word starting so
 * (`telefon*`: Telefonnummer), a plain entry only a whole word, `=WORD` only in that case (`NIE` is Spanish, `nie` Polish
 * for "no").
 */
const LABELS: Readonly<Record<PiiEntity, readonly string[]>> = {
  email: ['e-mail*|email*|mail*|courriel*|correo*|posta elettronica|pec|adres e-mail*'],
  phone: [
    'phone*|telephone*|tel|tél|telf|fax|telefon*|téléphone*|teléfono*|telefono*|telefoon*|mobile*|mobil*',
    'mobiel*|móvil*|movil*|cell*|handy*|portable*|komórk*|komork*|whatsapp*|sms|call*|ring|ruf*|anruf*',
    'rückruf*|appel*|joindre|joignable|llam*|llám*|chiam*|bel|bellen|gebeld|zadzwo*|dzwo*|kontakt*|contact*',
    'contatt*|numéro de portable|reach*|erreich*|joign*|localizable|raggiungibil*|bereikbaar|dostępn*',
    'richiam*|terugbel*|teruggebeld|oddzwon*',
  ],
  creditCard: [
    'card*|credit card*|creditcard*|kreditkart*|karte*|kartennummer*|carte*|tarjeta*|carta*|kaart*',
    'karta|karty|kartą|kartę|visa|mastercard|amex|american express|maestro|diners|cb|payment*|checkout*',
    'zahlung*|bezahl*|kasse|paiement*|pago*|pagament*|betaling*|afrekenen|płatnoś*|platnos*',
  ],
  iban: [
    'iban|account*|konto*|bankverbindung*|compte*|cuenta*|conto*|rekening*|rachun*|bank*|überweis*|virement*',
    'transferencia*|bonifico*|overschrijving*|overmaken|przelew*|sepa*|rib',
  ],
  ipAddress: [
    'ip|ip-adress*|ipv4|ipv6|adresse ip|dirección ip|direccion ip|indirizzo ip|ip-adres*|adres ip|server*',
    'host*|gateway*|dns|router*|firewall*|proxy*|login*|connexion*|conexión*|accesso|logowani*',
  ],
  usSsn: ['ssn|social security*|social-security*|taxpayer*|itin'],
  ukNino: ['national insurance*|nino|ni number|ni no'],
  deTaxId: [
    'steuer*|idnr|id-nr|identifikationsnummer*|tin|tax id*|tax identification*|tax number*|finanzamt*|bzst',
  ],
  frNir: [
    'nir|sécurité sociale|securite sociale|sécu|secu|insee|n° ss|numéro ss|carte vitale|vitale|ameli',
    'social security*',
  ],
  esDni: ['dni|=NIE|nif|d.n.i|n.i.e|documento nacional*|documento de identidad|identidad'],
  itFiscalCode: ['codice fiscale|cod. fisc*|c.f|cf|fiscal code|tessera sanitaria'],
  nlBsn: ['bsn|burgerservicenummer*|burger service nummer|burgerservice*|sofinummer*|sofi-nummer*|sofi'],
  plPesel: ['pesel*'],
};

/** Version words: a dotted version (`4.2.1.0`, `18.16.3874.242`) reads as an IPv4 address or a dotted phone number. */
const VERSION_WORDS = [
  'version*|versión*|versione*|versie*|wersj*|release*|build*|firmware*|update*|upgrade*|patch*|aktualizacj*',
  'mise à jour|actualización*|aggiornament*|app|sdk|node|npm|kernel',
];

/** Labels that lower a type. */
const AGAINST: Readonly<Partial<Record<PiiEntity, readonly string[]>>> = {
  ipAddress: VERSION_WORDS,
  phone: VERSION_WORDS,
};

interface Label {
  /** Lower-case character codes. */
  readonly codes: Uint16Array;
  /** Matches only as a whole word (else as the start of a word: `telefon` in `Telefonnummer`). */
  readonly whole: boolean;
  /** The exact spelling for a case-sensitive label, else null. */
  readonly exact: string | null;
  boost: number;
  against: number;
}

/** Lower case of the codes below 0x250 (Latin, Latin-1, Latin Extended-A and B) that stay one code unit. */
const LOWER = new Uint16Array(0x250);
/** 1 for the letters and digits among the codes below 0x250. */
const ALNUM = new Uint8Array(0x250);
for (let c = 0; c < LOWER.length; c++) {
  const l = String.fromCharCode(c).toLowerCase();
  LOWER[c] = l.length === 1 ? l.charCodeAt(0) : c;
  ALNUM[c] = (c < 0x80 ? isAsciiAlnum(c) : isWordChar(c)) ? 1 : 0;
}

function lowerCode(c: number): number {
  if (c < 0x250) return LOWER[c]!;
  const l = String.fromCharCode(c).toLowerCase();
  return l.length === 1 ? l.charCodeAt(0) : c;
}

/** A letter or digit of any script (word boundaries). */
function isAlnum(c: number): boolean {
  return c < 0x250 ? ALNUM[c] === 1 : isWordChar(c);
}

/** Labels by their first two lower-case codes (`c0 << 16 | c1`), longest first. */
const BY_PREFIX = new Map<number, Label[]>();
/**
 * A quick filter before the map: for a first code below 0x250, bit (c1 − 97) is set when a label starts with c0 and
 * the letter c1 (a–z), bit 31 when one starts with c0 and another second character.
 */
const SECOND = new Uint32Array(0x250);

function addLabels(words: readonly string[], boost: number, against: number): void {
  for (const raw of words) {
    const exact = raw.startsWith('=') ? raw.slice(1) : null;
    const word = (exact ?? raw).toLowerCase();
    const whole = !word.endsWith('*');
    const text = whole ? word : word.slice(0, -1);
    const codes = Uint16Array.from(text, (ch) => ch.charCodeAt(0));
    const c0 = codes[0]!;
    const c1 = codes[1]!;
    if (c0 < 0x250) SECOND[c0]! |= c1 >= 97 && c1 <= 122 ? 1 << (c1 - 97) : 1 << 31;
    const key = (c0 << 16) | c1;
    const list = BY_PREFIX.get(key) ?? [];
    const same = list.find((l) => l.whole === whole && l.codes.join() === codes.join());
    if (same) {
      same.boost |= boost;
      same.against |= against;
    } else {
      list.push({ codes, whole, exact, boost, against });
      list.sort((a, b) => b.codes.length - a.codes.length);
      BY_PREFIX.set(key, list);
    }
  }
}

const split = (lists: readonly string[]) => lists.flatMap((l) => l.split('|'));
for (const [entity, words] of Object.entries(LABELS) as [PiiEntity, readonly string[]][]) {
  addLabels(split(words), ENTITY_BIT[entity], 0);
}
for (const [entity, words] of Object.entries(AGAINST) as [PiiEntity, readonly string[]][]) {
  addLabels(split(words ?? []), 0, ENTITY_BIT[entity]);
}

function isSentenceEnd(c: number): boolean {
  return c === CH_DOT || c === 0x21 || c === 0x3f;
}

/** Whitespace then a capital at `k` (`pago? El código`), not `Tel. 030` or `Nr. 12`. */
function isSentenceStart(text: string, k: number): boolean {
  const space = text.charCodeAt(k);
  if (space !== 0x20 && space !== 0x0a) return false;
  const c = text.charCodeAt(k + 1);
  return c === c && lowerCode(c) !== c;
}

/** How far a label's word may extend past the label (`Steuer` in `Steueridentifikationsnummer`). */
const MAX_WORD = 32;

/** The label starting at `k` (a word start) and ending by `limit`, or null. */
function labelAt(text: string, k: number, limit: number): Label | null {
  const c0 = lowerCode(text.charCodeAt(k));
  const c1 = lowerCode(text.charCodeAt(k + 1));
  if (c0 < 0x250) {
    const mask = SECOND[c0]!;
    if (mask === 0) return null;
    if (c1 >= 97 && c1 <= 122 ? (mask & (1 << (c1 - 97))) === 0 : (mask & (1 << 31)) === 0) return null;
  }
  const list = BY_PREFIX.get((c0 << 16) | c1);
  if (list === undefined) return null;
  for (const label of list) {
    const codes = label.codes;
    const len = codes.length;
    if (k + len > limit) continue;
    let j = 2;
    while (j < len && lowerCode(text.charCodeAt(k + j)) === codes[j]) j++;
    if (j < len) continue;
    if (label.whole && k + len < text.length && isAlnum(text.charCodeAt(k + len))) continue;
    if (label.exact !== null && !text.startsWith(label.exact, k)) continue;
    return label;
  }
  return null;
}

/**
 * `score` adjusted by the labels around `text[start, end)` for the entity of `bit`: +CONTEXT_BOOST (capped at 1) for a
 * label of its own whose word ends within CONTEXT_BEFORE characters before the value, counting only labels of the same
 * sentence that no digit or `@` separates from the value (a label names the next value, not the one after it), or,
 * when no label stands there, one that starts within CONTEXT_AFTER characters after it in the same sentence and line;
 * −CONTEXT_PENALTY for a label against it before it and none of its own.
 */
export function withContext(text: string, start: number, end: number, bit: number, score: number): number {
  // Before the value: word by word from the nearest, within its sentence, back to a digit or `@`.
  const nearEnough = start - CONTEXT_BEFORE;
  const farthest = Math.max(0, nearEnough - MAX_WORD);
  let own = false;
  let against = false;
  let labelled = false;
  let wordEnd = -1;
  for (let k = start - 1; k >= farthest && !own; k--) {
    const c = text.charCodeAt(k);
    if ((c >= 48 && c <= 57) || c === CH_AT || (isSentenceEnd(c) && isSentenceStart(text, k + 1))) break;
    if (!isAlnum(c)) {
      wordEnd = -1;
      continue;
    }
    if (wordEnd < 0) {
      wordEnd = k + 1;
      if (wordEnd < nearEnough) break;
    }
    if (k > 0 && isAlnum(text.charCodeAt(k - 1))) continue;
    // A word starts at k: labels may also span several words (`social security`), ending before the value.
    const label = labelAt(text, k, start);
    if (label === null) continue;
    labelled = true;
    if (label.boost & bit) own = true;
    else if (label.against & bit) against = true;
  }
  if (!labelled) {
    // Unlabelled before: after the value, within its sentence and line (`123456782 (BSN)`, not the next line's
    // `- Phone:`).
    const to = Math.min(text.length, end + CONTEXT_AFTER);
    let prevAlnum = false;
    for (let k = end; k < to - 1 && !own; k++) {
      const c = text.charCodeAt(k);
      if (
        (c >= 48 && c <= 57) ||
        c === 0x0a ||
        c === CH_DOT ||
        c === CH_COLON ||
        c === 0x3b ||
        c === 0x21 ||
        c === 0x3f
      ) {
        break;
      }
      const alnum = isAlnum(c);
      const wordStart = alnum && !prevAlnum;
      prevAlnum = alnum;
      if (!wordStart) continue;
      const label = labelAt(text, k, text.length);
      if (label !== null && label.boost & bit) own = true;
    }
  }
  if (own) return Math.min(1, score + CONTEXT_BOOST);
  return against ? Math.max(0, score - CONTEXT_PENALTY) : score;
}
