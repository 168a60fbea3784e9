import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.mjs';
import { scanJson } from './json-scan.mjs';

/** The members of a trace that its content hash covers, and nothing else. */
export const CONTENT_FIELDS = Object.freeze(['inputContext', 'outputDecision', 'metadata', 'rationale']);

/** What checking a trace's content against the export finds (the service's GET /traces/:id/verify says the same). */
export const CONTENT_STATUSES = Object.freeze(['intact', 'altered', 'erased', 'unhashed']);

/** A content salt: 16 random bytes as 32 hex digits. */
const SALT = /^[0-9a-fA-F]{32}$/;
const HASH = /^[0-9a-f]{64}$/;

/**
 * The hashed content of a trace: `{inputContext, outputDecision, metadata, rationale}` as the trace carries them.
 *
 * @param {Record<string, unknown>} trace
 * @returns {Record<string, unknown>}
 */
export function traceContent(trace) {
  const content = {};
  for (const field of CONTENT_FIELDS) content[field] = trace[field];
  return content;
}

/**
 * contentHash = hex(SHA-256(the salt's 16 bytes ‖ UTF-8 of the RFC 8785 canonical JSON of the trace's content)).
 *
 * @param {string} salt 32 hex digits (the trace's `contentSalt`)
 * @param {Record<string, unknown>} trace a trace, or its content
 * @returns {string}
 */
export function contentHashOf(salt, trace) {
  if (typeof salt !== 'string' || !SALT.test(salt)) throw new TypeError('a content salt is 32 hex digits');
  return createHash('sha256')
    .update(Buffer.from(salt, 'hex'))
    .update(canonicalJson(traceContent(trace)), 'utf8')
    .digest('hex');
}

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Whether a value is a trace as GET /traces/:id shows it (an id and the four content members). */
export function isTrace(value) {
  return isObject(value) && typeof value.id === 'string' && CONTENT_FIELDS.every((field) => field in value);
}

/** The traces of one parsed JSON value: an API answer (`{success, data}`), an array, or a trace. */
function tracesOf(value, where) {
  if (isObject(value) && 'success' in value && 'data' in value) return tracesOf(value.data, where);
  if (Array.isArray(value)) return value.flatMap((item, i) => tracesOf(item, `${where}, item ${i + 1}`));
  if (isTrace(value)) return [value];
  throw new Error(
    `${where}: not a trace (a trace has an id and inputContext, outputDecision, metadata, rationale)`,
  );
}

/** JSON.parse, refusing what it lets through silently (duplicate keys, inexact numbers, deep nesting). */
function parseStrict(text, where) {
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    return { value: undefined, error: `${where}: not JSON` };
  }
  const refused = scanJson(text);
  if (refused) return { value: undefined, error: `${where}: ${refused.reason}: ${refused.detail}` };
  return { value, error: null };
}

/**
 * The traces of a traces file: one JSON document (the answer of GET /traces/:id, a bare trace, an array of traces,
 * or the answer of GET /traces) or NDJSON, one of those a line. Throws (an Error naming the line) when the text is
 * in none of these forms, or when a trace has no `contentSalt` member (a service that records content hashes shows
 * it, null when the trace has none).
 *
 * @param {string} text
 * @returns {{trace: Record<string, unknown>, line: number | null}[]}
 */
export function parseTracesText(text) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') return [];
  const found = [];
  const whole = parseStrict(text, 'the file');
  if (whole.error === null) {
    for (const trace of tracesOf(whole.value, 'the file')) found.push({ trace, line: null });
  } else {
    const lines = text.split(/\r?\n/);
    // A single document that does not parse: its own error, not that of its first line.
    if (lines.filter((line) => line.trim() !== '').length <= 1) throw new Error(whole.error);
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      const where = `line ${i + 1}`;
      const parsed = parseStrict(line, where);
      if (parsed.error !== null) throw new Error(parsed.error);
      for (const trace of tracesOf(parsed.value, where)) found.push({ trace, line: i + 1 });
    });
  }
  for (const { trace, line } of found) {
    if (!('contentSalt' in trace)) {
      throw new Error(
        `${line === null ? '' : `line ${line}: `}trace ${trace.id} has no contentSalt member (GET /traces/:id of ` +
          'a service that records content hashes shows it, null when the trace has none)',
      );
    }
  }
  return found;
}

/**
 * A trace reduced to what the check needs, its content hash computed at once (the content is not kept).
 *
 * @param {Record<string, unknown>} trace
 * @param {string} source
 * @param {number | null} line
 */
export function loadTrace(trace, source, line = null) {
  const salt = trace.contentSalt;
  const erased = trace.erasedAt !== undefined && trace.erasedAt !== null;
  let computedHash = null;
  let saltProblem = null;
  if (salt === null || salt === undefined) saltProblem = 'the trace has no contentSalt';
  else if (typeof salt !== 'string' || !SALT.test(salt)) saltProblem = 'its contentSalt is not 32 hex digits';
  else computedHash = contentHashOf(salt, trace);
  return {
    id: trace.id,
    organizationId: typeof trace.organizationId === 'string' ? trace.organizationId : null,
    erasedAt: erased ? trace.erasedAt : null,
    hasSalt: salt !== null && salt !== undefined,
    computedHash,
    saltProblem,
    source,
    line,
  };
}

/**
 * Follows an export's entries for a set of traces (`observe` each parsed entry, in any order), keeping for each the
 * latest entry (highest sequence) that targets it (`targetType` "trace", `targetId` its id) and records
 * `metadata.contentHash`; then `results(chain)` compares each trace's content hash with it. Memory holds the traces
 * given (their hashes, not their content), whatever the export's length.
 */
export class TraceContentCheck {
  /** @param {ReturnType<typeof loadTrace>[]} traces */
  constructor(traces = []) {
    this.traces = traces;
    /** @type {Map<string, {entries: number, latest: {sequence: number, id: unknown, eventType: unknown, hash: string} | null}>} */
    this.seen = new Map(traces.map((t) => [t.id, { entries: 0, latest: null }]));
  }

  get size() {
    return this.traces.length;
  }

  /** @param {Record<string, unknown>} entry one parsed export line */
  observe(entry) {
    if (!isObject(entry) || entry.targetType !== 'trace' || typeof entry.targetId !== 'string') return;
    const slot = this.seen.get(entry.targetId);
    if (!slot) return;
    slot.entries += 1;
    const hash = isObject(entry.metadata) ? entry.metadata.contentHash : undefined;
    if (typeof hash !== 'string' || !Number.isSafeInteger(entry.sequence)) return;
    if (slot.latest === null || entry.sequence > slot.latest.sequence) {
      slot.latest = {
        sequence: entry.sequence,
        id: entry.id ?? null,
        eventType: entry.eventType ?? null,
        hash,
      };
    }
  }

  /**
   * Each trace's status: `erased` (erasedAt set: nothing left to hash), `unhashed` (no entry records a content hash
   * for it), `altered` (the trace has no valid salt while its entry records a hash, or its content hashes to
   * something else), or `intact`.
   *
   * @param {{organizationId: string | null, headSequence: number | null}} chain the export's organization and the
   *   last sequence of its verified chain
   */
  results({ organizationId, headSequence }) {
    return this.traces.map((trace) => {
      const { entries, latest } = this.seen.get(trace.id);
      let status;
      let detail;
      if (trace.erasedAt !== null) {
        status = 'erased';
        detail = `its subject's content was erased at ${trace.erasedAt}`;
      } else if (latest === null) {
        status = 'unhashed';
        detail =
          entries === 0
            ? 'no entry of the export targets this trace'
            : `none of the ${entries} entries of the export that target it records a content hash`;
      } else if (trace.computedHash === null) {
        status = 'altered';
        detail = `${trace.saltProblem}, while its entry at sequence ${latest.sequence} records a content hash`;
      } else if (trace.computedHash === latest.hash) {
        status = 'intact';
        detail = `its content hashes to the hash its entry at sequence ${latest.sequence} records`;
      } else {
        status = 'altered';
        detail =
          `its content hashes to ${trace.computedHash}, its entry at sequence ${latest.sequence} records ` +
          `${HASH.test(latest.hash) ? latest.hash : JSON.stringify(latest.hash)}`;
      }
      const sameOrganization =
        organizationId === null || trace.organizationId === null
          ? null
          : trace.organizationId === organizationId;
      const inVerifiedChain =
        latest === null ? null : headSequence !== null && latest.sequence <= headSequence;
      // A trace that has a salt was stored with a hashed entry: an export without it cannot vouch for the trace.
      const missingEntry = status === 'unhashed' && trace.hasSalt;
      return {
        id: trace.id,
        source: trace.source,
        line: trace.line,
        organizationId: trace.organizationId,
        status,
        detail,
        computedHash: trace.computedHash,
        recordedHash: latest?.hash ?? null,
        entrySequence: latest?.sequence ?? null,
        entryId: latest?.id ?? null,
        entryEventType: latest?.eventType ?? null,
        entries,
        inVerifiedChain,
        sameOrganization,
        ok: status !== 'altered' && sameOrganization !== false && inVerifiedChain !== false && !missingEntry,
      };
    });
  }
}

/**
 * The failures of the traces' results, for the report's verdict.
 *
 * @param {ReturnType<TraceContentCheck['results']>} results
 * @param {string | null} exportOrganization
 */
export function traceFailures(results, exportOrganization) {
  const failures = [];
  for (const t of results) {
    if (t.status === 'altered') failures.push(`trace ${t.id}: content altered (${t.detail})`);
    else if (t.status === 'unhashed' && !t.ok && t.sameOrganization !== false) {
      failures.push(
        `trace ${t.id}: has a contentSalt, but no entry of the export records its content hash ` +
          '(an export taken before the trace was stored?)',
      );
    }
    if (t.sameOrganization === false) {
      failures.push(`trace ${t.id}: organization ${t.organizationId}, the export's is ${exportOrganization}`);
    }
    if (t.inVerifiedChain === false) {
      failures.push(
        `trace ${t.id}: its content hash is recorded at sequence ${t.entrySequence}, beyond the verified chain`,
      );
    }
  }
  return failures;
}

/** One line of the traces' statuses for the verdict: "3 traces: 2 intact, 1 erased". */
export function traceSummary(results) {
  const counts = CONTENT_STATUSES.map((status) => [status, results.filter((t) => t.status === status).length])
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`);
  return `${results.length} ${results.length === 1 ? 'trace' : 'traces'}: ${counts.join(', ')}`;
}
