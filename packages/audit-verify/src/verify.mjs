import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { ChainVerifier } from './chain.mjs';
import { parseCheckpointsText, verifyCheckpointSignature } from './checkpoints.mjs';
import { canonicalJson } from './canonical-json.mjs';
import { Keyring, parseKeysText } from './keys.mjs';
import {
  loadTrace,
  parseTracesText,
  TraceContentCheck,
  traceFailures,
  traceSummary,
} from './trace-content.mjs';

/** An input that cannot be read or understood (exit code 2), as opposed to a verification failure (exit code 1). */
export class InputError extends Error {
  constructor(message) {
    super(message);
    this.name = 'InputError';
  }
}

/**
 * Text from the files (ids, key ids, organization ids) as one printable line: control characters and line
 * separators escaped, so that no value can start a line of its own (a forged `OK:` verdict, say).
 */
export function printable(text) {
  return String(text).replace(
    /[\p{Cc}\u2028\u2029]/gu,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

const short = (hash) => (typeof hash === 'string' ? `${hash.slice(0, 12)}…` : String(hash));
const label = (checkpoint) => `checkpoint ${checkpoint.id ?? '(no id)'} (sequence ${checkpoint.sequence})`;

async function readText(path, what) {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read ${what} ${path}: ${error.code ?? error.message}`);
  }
}

/**
 * Loads keys and checkpoints (each checkpoint once, however many files carry it) and checks each checkpoint's
 * signature. Returns the keyring, the checkpoints with their `signature` verdict, and whether checkpoints were asked
 * for (`requested`: some checkpoints text was given; the report fails when it holds no checkpoint).
 *
 * @param {{checkpointTexts?: {source: string, text: string}[], keyTexts?: {source: string, text: string}[]}} input
 */
export function loadCheckpoints({ checkpointTexts = [], keyTexts = [] }) {
  const keyring = new Keyring();
  for (const { source, text } of keyTexts) {
    let keys;
    try {
      keys = parseKeysText(text);
    } catch (error) {
      throw new InputError(`keys file ${source}: ${error.message}`);
    }
    for (const key of keys) keyring.add(key, source);
  }
  const seen = new Set();
  const checkpoints = [];
  for (const { source, text } of checkpointTexts) {
    let list;
    try {
      list = parseCheckpointsText(text);
    } catch (error) {
      throw new InputError(`checkpoints file ${source}: ${error.message}`);
    }
    for (const checkpoint of list) {
      const identity = canonicalJson(checkpoint);
      if (seen.has(identity)) continue;
      seen.add(identity);
      checkpoints.push({ checkpoint, source, signature: verifyCheckpointSignature(checkpoint, keyring) });
    }
  }
  return { keyring, checkpoints, requested: checkpointTexts.length > 0 };
}

/**
 * Loads the traces to check against the export (each text a traces file: see `parseTracesText`), their content
 * hashes computed at once. Throws an `InputError` naming the file when one is in no accepted form.
 *
 * @param {{traceTexts?: {source: string, text: string}[]}} input
 * @returns {TraceContentCheck}
 */
export function loadTraces({ traceTexts = [] }) {
  const traces = [];
  for (const { source, text } of traceTexts) {
    let found;
    try {
      found = parseTracesText(text);
    } catch (error) {
      throw new InputError(`traces file ${source}: ${error.message}`);
    }
    if (found.length === 0) throw new InputError(`traces file ${source}: no trace in it`);
    for (const { trace, line } of found) traces.push(loadTrace(trace, source, line));
  }
  return new TraceContentCheck(traces);
}

/**
 * Verifies an export (an async iterable of its lines) against checkpoints and keys, and the given traces' content
 * against the hashes its entries record; see `verifyAuditFiles`.
 *
 * @param {AsyncIterable<string> | Iterable<string>} lines
 * @param {ReturnType<typeof loadCheckpoints>} loaded
 * @param {{exportSource?: string, traces?: TraceContentCheck}} [options]
 */
export async function verifyAuditLines(
  lines,
  { keyring, checkpoints, requested = false },
  { exportSource = null, traces = new TraceContentCheck() } = {},
) {
  const trusted = checkpoints.filter((c) => c.signature === 'valid');
  const verifier = new ChainVerifier({
    watch: trusted.map((c) => c.checkpoint.sequence),
    onEntry: traces.size > 0 ? (entry) => traces.observe(entry) : null,
  });
  for await (const line of lines) verifier.push(line);
  return buildReport(verifier, { keyring, checkpoints, requested }, exportSource, traces);
}

/**
 * Verifies the export file (read as a stream, line by line) against the checkpoints files and the keys files, and
 * the traces of the traces files against the export. Throws an `InputError` when a file cannot be read or is not in
 * an accepted form.
 *
 * @param {{exportPath: string, checkpointPaths?: string[], keyPaths?: string[], tracePaths?: string[]}} paths
 */
export async function verifyAuditFiles({ exportPath, checkpointPaths = [], keyPaths = [], tracePaths = [] }) {
  if (checkpointPaths.length > 0 && keyPaths.length === 0) {
    throw new InputError('checkpoints need the keys that signed them (--keys)');
  }
  const keyTexts = [];
  for (const path of keyPaths) keyTexts.push({ source: path, text: await readText(path, 'keys file') });
  const checkpointTexts = [];
  for (const path of checkpointPaths) {
    checkpointTexts.push({ source: path, text: await readText(path, 'checkpoints file') });
  }
  const loaded = loadCheckpoints({ checkpointTexts, keyTexts });
  const traceTexts = [];
  for (const path of tracePaths) traceTexts.push({ source: path, text: await readText(path, 'traces file') });
  const traces = loadTraces({ traceTexts });

  const stream = createReadStream(exportPath, { encoding: 'utf8' });
  let streamError = null;
  stream.on('error', (error) => {
    streamError = error;
  });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  stream.on('error', () => lines.close());
  let report;
  try {
    report = await verifyAuditLines(lines, loaded, { exportSource: exportPath, traces });
  } catch (error) {
    streamError ??= error;
  }
  if (streamError) {
    throw new InputError(`cannot read export ${exportPath}: ${streamError.code ?? streamError.message}`);
  }
  return report;
}

function buildReport(verifier, { keyring, checkpoints, requested }, exportSource, traces) {
  const chain = verifier.result();
  const exportOrganization = chain.organizationId;
  const endsAt = chain.lastSequence ?? 0;

  const checked = checkpoints.map(({ checkpoint, source, signature }) => {
    const sameOrganization =
      exportOrganization === null ? null : checkpoint.organizationId === exportOrganization;
    let containment = 'not_checked';
    let exportHash = null;
    if (signature === 'valid' && sameOrganization !== false) {
      const seen = verifier.hashAt(checkpoint.sequence);
      if (seen) {
        exportHash = seen.hash;
        containment = seen.hash === checkpoint.hash ? 'contained' : 'rewritten';
      } else {
        containment = checkpoint.sequence > endsAt ? 'beyond_export' : 'missing';
      }
    }
    return {
      id: checkpoint.id ?? null,
      organizationId: checkpoint.organizationId,
      sequence: checkpoint.sequence,
      hash: checkpoint.hash,
      createdAt: checkpoint.createdAt,
      keyId: checkpoint.keyId,
      source,
      signature,
      sameOrganization,
      containment,
      exportHash,
      ok: signature === 'valid' && sameOrganization !== false && containment === 'contained',
    };
  });

  const pinned = checked.filter((c) => c.signature === 'valid' && c.sameOrganization !== false);
  const latest = pinned.reduce((top, c) => (top === null || c.sequence > top.sequence ? c : top), null);
  const truncation = {
    truncated: latest !== null && endsAt < latest.sequence,
    exportEndsAt: endsAt,
    latestCheckpointSequence: latest?.sequence ?? null,
  };

  const failures = [];
  if (chain.brokenAt) {
    const { line, sequence, reason } = chain.brokenAt;
    failures.push(
      `chain broken at line ${line}${sequence === null ? '' : ` (sequence ${sequence})`}: ${reason}`,
    );
  }
  // Checkpoints were asked for and none was found (an empty list, or webhook bodies of other events only): nothing
  // pins the chain, which must not pass as if it had been checked against them.
  if (requested && checkpoints.length === 0) failures.push('no checkpoint in the checkpoints file(s)');
  if (truncation.truncated) {
    failures.push(
      `export truncated: ends at sequence ${endsAt}, a signed checkpoint is at sequence ${latest.sequence}`,
    );
  }
  for (const c of checked) {
    if (c.containment === 'rewritten') {
      failures.push(
        `chain rewritten: entry ${c.sequence} has hash ${short(c.exportHash)}, ${label(c)} signed ${short(c.hash)}`,
      );
    } else if (c.containment === 'missing') {
      failures.push(`${label(c)}: the export has no entry at that sequence`);
    }
  }
  for (const c of checked) {
    if (c.signature !== 'valid') failures.push(`${label(c)}: ${c.signature} (key ${c.keyId})`);
    else if (c.sameOrganization === false) {
      failures.push(`${label(c)}: organization ${c.organizationId}, the export's is ${exportOrganization}`);
    }
  }
  for (const key of keyring.rejected)
    failures.push(`key ${key.keyId ?? '(no keyId)'} refused: ${key.status}`);
  const traceResults = traces.results({
    organizationId: exportOrganization,
    headSequence: chain.headSequence,
  });
  failures.push(...traceFailures(traceResults, exportOrganization));

  const ok = failures.length === 0;
  let verdict;
  if (ok) {
    const entries =
      chain.headSequence === null
        ? `${chain.entries} entries, chain empty`
        : `${chain.entries} ${chain.entries === 1 ? 'entry' : 'entries'}, chain intact, head ${short(chain.head)} at sequence ${chain.headSequence}`;
    const pins =
      checked.length === 0
        ? 'no checkpoints given'
        : `${checked.length} ${checked.length === 1 ? 'checkpoint' : 'checkpoints'} verified, latest at sequence ${latest.sequence}`;
    verdict = `OK: ${entries}; ${pins}${traceResults.length > 0 ? `; ${traceSummary(traceResults)}` : ''}`;
  } else {
    verdict = printable(`FAILED: ${failures.join('; ')}`);
  }

  return {
    ok,
    verdict,
    export: {
      file: exportSource,
      lines: chain.lines,
      entries: chain.entries,
      organizationId: exportOrganization,
      firstSequence: chain.firstSequence,
      lastSequence: chain.lastSequence,
    },
    chain: {
      valid: chain.valid,
      head: chain.head,
      headSequence: chain.headSequence,
      brokenAt: chain.brokenAt,
    },
    keys: keyring.entries.map(({ keyId, thumbprint, status, detail, source, createdAt }) => ({
      keyId,
      thumbprint,
      status,
      ...(detail ? { detail } : {}),
      source,
      createdAt,
    })),
    checkpoints: checked,
    truncation,
    traces: traceResults,
    failures,
  };
}

/** The report as human-readable lines, the verdict last. */
export function formatReport(report) {
  const out = [];
  const { export: exp, chain, truncation } = report;
  const range = exp.firstSequence === null ? '' : `, sequences ${exp.firstSequence}..${exp.lastSequence}`;
  out.push(
    `export: ${exp.file ?? '(stream)'}: ${exp.entries} entries${range}${exp.organizationId ? `, organization ${exp.organizationId}` : ''}`,
  );
  if (chain.valid) {
    out.push(
      chain.head === null
        ? 'chain: empty'
        : `chain: intact, head ${chain.head} at sequence ${chain.headSequence}`,
    );
  } else {
    const b = chain.brokenAt;
    out.push(
      `chain: BROKEN at line ${b.line}, sequence ${b.sequence ?? '-'}, id ${b.id ?? '-'}: ${b.reason} (${b.detail})`,
    );
    if (chain.head !== null)
      out.push(`chain: verified up to sequence ${chain.headSequence}, hash ${chain.head}`);
  }
  for (const key of report.keys) {
    out.push(
      `key: ${key.keyId ?? '(no keyId)'}: ${key.status === 'ok' ? 'usable' : `REFUSED, ${key.status} (${key.detail})`} [${key.source}]`,
    );
  }
  for (const c of report.checkpoints) {
    const organization =
      c.sameOrganization === null
        ? 'organization not compared (empty export)'
        : c.sameOrganization
          ? 'organization matches'
          : `ORGANIZATION MISMATCH (${c.organizationId})`;
    const containment = {
      contained: 'contained (the export has this hash at this sequence)',
      rewritten: `REWRITTEN (the export has ${c.exportHash} at this sequence)`,
      beyond_export: 'BEYOND EXPORT (the export ends before this sequence)',
      missing: 'MISSING (the export has no entry at this sequence)',
      not_checked: 'containment not checked (checkpoint not trusted)',
    }[c.containment];
    out.push(
      `checkpoint: ${c.id ?? '(no id)'} sequence ${c.sequence} hash ${short(c.hash)} key ${c.keyId}: signature ${c.signature === 'valid' ? 'valid' : c.signature.toUpperCase()}, ${organization}, ${containment}`,
    );
  }
  if (truncation.latestCheckpointSequence !== null) {
    out.push(
      truncation.truncated
        ? `truncation: TRUNCATED, the export ends at sequence ${truncation.exportEndsAt}, the latest signed checkpoint is at ${truncation.latestCheckpointSequence}`
        : `truncation: none, the export ends at sequence ${truncation.exportEndsAt}, the latest signed checkpoint is at ${truncation.latestCheckpointSequence}`,
    );
  }
  for (const t of report.traces ?? []) {
    const status = t.status === 'altered' || !t.ok ? t.status.toUpperCase() : t.status;
    const where = t.line === null ? t.source : `${t.source}:${t.line}`;
    out.push(`trace: ${t.id}: ${status} (${t.detail}) [${where}]`);
  }
  out.push(report.verdict);
  return out.map(printable);
}
