import { entryHash, GENESIS_HASH, HASHED_FIELDS } from './entry-hash.mjs';
import { scanJson } from './json-scan.mjs';

/** Why a chain breaks, in the order the checks run on each line. */
export const BREAK_REASONS = Object.freeze([
  'malformed_line',
  'duplicate_key',
  'non_canonical_number',
  'sequence_gap',
  'organization_mismatch',
  'prev_hash_mismatch',
  'hash_mismatch',
]);

/** What an entry line must hold besides the hashed fields. */
function missingField(entry) {
  if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return 'the line is not a JSON object';
  if (!Number.isSafeInteger(entry.sequence)) return 'sequence is not an integer';
  if (typeof entry.organizationId !== 'string') return 'organizationId is not a string';
  if (typeof entry.prevHash !== 'string') return 'prevHash is not a string';
  if (typeof entry.hash !== 'string') return 'hash is not a string';
  const absent = HASHED_FIELDS.find((field) => !(field in entry));
  return absent ? `the entry has no ${absent}` : null;
}

/**
 * Verifies an export's chain line by line (`push` each line of the NDJSON, then `result()`), keeping only the
 * previous hash, counters and the hashes of the entries at the watched sequences (the checkpoints'): memory does
 * not grow with the number of entries.
 *
 * Rules: sequences 1, 2, 3 … without gaps; one organization; the first prevHash 64 zeros, each later one the
 * previous entry's hash; each hash recomputed. Blank lines are skipped; a line that is not JSON (or nests deeper
 * than 512 levels), or not an entry, breaks the chain, and so does a line that JSON.parse reads differently from a
 * stricter reader: an object with a duplicate key, or a number literal that is not exactly the double it parses to
 * (the hash covers the parsed value, so such a line would pass while another reader sees other values). The first break is kept; lines after it are still read (leniently) so that the export's last
 * sequence and the hashes it shows at the watched sequences are known.
 */
export class ChainVerifier {
  /**
   * @param {{watch?: Iterable<number>, onEntry?: (entry: Record<string, unknown>) => void}} [options] sequences whose
   *   entry hash to record (the checkpoints'), and what to call with each line parsed as a JSON object (the traces'
   *   content check), valid or not
   */
  constructor({ watch = [], onEntry = null } = {}) {
    this.onEntry = onEntry;
    this.line = 0;
    this.lines = 0;
    this.entries = 0;
    this.verified = 0;
    this.previous = GENESIS_HASH;
    this.organizationId = null;
    this.firstSequence = null;
    this.lastSequence = null;
    this.broken = null;
    /** @type {Map<number, {hash: unknown, line: number, id: unknown} | null>} */
    this.observed = new Map([...watch].map((sequence) => [sequence, null]));
  }

  /** @param {string} text one line of the export, without its line break */
  push(text) {
    this.line += 1;
    if (this.line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') return;
    this.lines += 1;
    let entry;
    try {
      entry = JSON.parse(text);
    } catch {
      return this.fail(null, null, 'malformed_line', 'the line is not JSON');
    }
    const sequence =
      entry && typeof entry === 'object' && Number.isSafeInteger(entry.sequence) ? entry.sequence : null;
    const id = entry && typeof entry === 'object' && 'id' in entry ? entry.id : null;
    if (sequence !== null) this.observe(sequence, entry, id);
    if (this.onEntry !== null && entry && typeof entry === 'object' && !Array.isArray(entry))
      this.onEntry(entry);
    if (this.broken) return;

    const refused = scanJson(text);
    if (refused) return this.fail(sequence, id, refused.reason, refused.detail);
    const missing = missingField(entry);
    if (missing) return this.fail(sequence, id, 'malformed_line', missing);
    const expected = this.verified + 1;
    if (sequence !== expected) {
      return this.fail(sequence, id, 'sequence_gap', `expected sequence ${expected}, found ${sequence}`);
    }
    if (this.organizationId === null) this.organizationId = entry.organizationId;
    if (entry.organizationId !== this.organizationId) {
      return this.fail(
        sequence,
        id,
        'organization_mismatch',
        `organization ${entry.organizationId}, the export's is ${this.organizationId}`,
      );
    }
    if (entry.prevHash !== this.previous) {
      return this.fail(
        sequence,
        id,
        'prev_hash_mismatch',
        `prevHash is not ${this.verified ? "the previous entry's hash" : 'the genesis hash (64 zeros)'}`,
      );
    }
    const hash = entryHash(this.previous, entry);
    if (hash !== entry.hash) {
      return this.fail(
        sequence,
        id,
        'hash_mismatch',
        `hash is not SHA-256(prevHash + "\\n" + canonical entry): recomputed ${hash}`,
      );
    }
    this.previous = hash;
    this.verified = sequence;
  }

  /** Counters, the first and last sequence, and the hash shown at a watched sequence (the first such entry). */
  observe(sequence, entry, id) {
    this.entries += 1;
    if (this.firstSequence === null) this.firstSequence = sequence;
    if (this.organizationId === null && typeof entry.organizationId === 'string') {
      this.organizationId = entry.organizationId;
    }
    if (this.lastSequence === null || sequence > this.lastSequence) this.lastSequence = sequence;
    if (this.observed.get(sequence) === null)
      this.observed.set(sequence, { hash: entry.hash, line: this.line, id });
  }

  fail(sequence, id, reason, detail) {
    this.broken = { line: this.line, sequence, id, reason, detail };
  }

  /** The hash the export shows at a watched sequence, or undefined when it has no entry there. */
  hashAt(sequence) {
    return this.observed.get(sequence) ?? undefined;
  }

  result() {
    return {
      valid: this.broken === null,
      lines: this.lines,
      entries: this.entries,
      organizationId: this.organizationId,
      firstSequence: this.firstSequence,
      lastSequence: this.lastSequence,
      /** The last verified entry's hash and sequence (the head when the chain is intact). */
      head: this.verified > 0 ? this.previous : null,
      headSequence: this.verified > 0 ? this.verified : null,
      brokenAt: this.broken,
    };
  }
}
