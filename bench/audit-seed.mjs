// The audit benchmark's chain (bench/audit.mjs): trace entries of one organization written with SQL in batches of
// 10,000, each entry's hash computed here from the exact bytes the service hashes: prevHash + "\n" + canonical JSON of
// the hashed content (UTF-8). Each entry's trace is written too, with its content and content salt, and the entry
// records the content hash the service records (`metadata.contentHash`, its own contentHashOf), as ingestion does. The raw SHA-256 floor over the same bytes is measured as the batches are built: only
// the hashing of each batch is timed, with Node's one-shot crypto.hash and with createHash().update().digest(), the
// batch's bytes built beforehand (one batch in memory at a time).
import { createHash, hash as oneShotHash, randomBytes } from 'node:crypto';
import { chainHash, GENESIS_HASH, hashedContent } from '../dist/libs/platform/src/audit/audit-hash.js';
import { canonicalJson } from '../dist/libs/platform/src/crypto/canonical-json.js';
import { contentHashOf } from '../dist/libs/governance/src/traces/trace-content.js';
import { addAuditRow, auditRows, dropIndexes, insertAuditEntries, rebuildIndexes } from './support.mjs';

const BATCH = 10_000;

/** A correctness failure: stops the run (a timing never does). */
export class Incorrect extends Error {}

// Entry g of the run (1, 2, 3 … across the main load and the incremental one): a trace decision of one of the agents,
// approved / flagged / blocked in about 88 / 10 / 2 proportions, a few milliseconds after entry g - 1.
const mix = (g) => {
  let x = Math.imul(g ^ (g >>> 15), 0x2c1b3c6d);
  x = Math.imul(x ^ (x >>> 12), 0x297a2d39);
  return (x ^ (x >>> 15)) >>> 0;
};
const hex = (value, width) => value.toString(16).padStart(width, '0');
const POLICY_IDS = {
  flagged: ['6650f0a1c2d3e4f5a6b7c801', '6650f0a1c2d3e4f5a6b7c802'],
  blocked: ['6650f0a1c2d3e4f5a6b7c803'],
};
const IPS = ['10.0.4.17', '10.0.4.18', '10.0.7.2', '172.16.3.40'];

/** Trace g's content as ingestion stores it (a prompt, an answer, the caller's metadata), and its salt. */
function traceContent(g, salt) {
  return {
    inputContext: { prompt: `Customer ${g} asks about the refund policy for order ${g * 7}` },
    outputDecision: {
      action: 'llm_response',
      text: `Refunds are accepted within 30 days for order ${g * 7}.`,
    },
    metadata: { channel: g % 3 ? 'chat' : 'email', locale: 'en-GB' },
    rationale: null,
    contentSalt: salt,
  };
}

function traceEntry(g, sequence, organizationId, agentIds, ms, contentHash) {
  const r = mix(g);
  const bucket = r % 100;
  const outcome = bucket < 2 ? 'blocked' : bucket < 12 ? 'flagged' : 'approved';
  const sec = Math.floor(ms / 1000);
  const agentId = agentIds[(r >>> 8) % agentIds.length];
  const confidence = outcome === 'flagged' ? (40 + (g % 29)) / 100 : (80 + (g % 19)) / 100;
  const metadata = {
    agentId,
    confidence,
    schemaVersion: '2026-04-11',
    policyIds:
      outcome === 'approved' ? [] : outcome === 'blocked' ? POLICY_IDS.blocked : [POLICY_IDS.flagged[g % 2]],
    contentHash,
    ...(outcome === 'flagged' ? { reviewItemId: `${hex(sec, 8)}ee${hex(g, 14)}` } : {}),
  };
  return {
    id: `${hex(sec, 8)}a0${hex(g, 14)}`,
    sequence,
    organizationId,
    eventType: `trace.${outcome}`,
    userId: null,
    actor: { type: 'agent', id: agentId, email: null },
    targetType: 'trace',
    targetId: `${hex(sec, 8)}${hex(g, 16)}`,
    metadata,
    ip: IPS[(r >>> 16) % IPS.length],
    userAgent: 'support-bot/2.3 (+openai-node 4.52)',
    createdAt: new Date(ms),
  };
}

const gapMs = (g) => 2 + (mix(g + 0x9e3779b9) % 3); // 2, 3 or 4 ms

/** Columns of traces rows, written by `insertTraces`. */
const traceRows = () => ({
  id: [],
  agentId: [],
  status: [],
  confidence: [],
  inputContext: [],
  outputDecision: [],
  metadata: [],
  searchText: [],
  contentSalt: [],
  contentEntryId: [],
  createdAt: [],
});

/** The traces of a batch of entries, in one statement. */
async function insertTraces(db, organizationId, rows) {
  await db.query(
    `insert into traces (id, organization_id, agent_id, status, confidence, input_context, output_decision, metadata,
       rationale, schema_version, search_text, content_salt, content_entry_id, created_at, updated_at)
     select t.id, $1, t.agent_id, t.status, t.confidence, t.input_context, t.output_decision, t.metadata, null,
       '2026-04-11', t.search_text, t.content_salt, t.content_entry_id, t.created_at, t.created_at
     from unnest($2::text[], $3::text[], $4::text[], $5::float8[], $6::jsonb[], $7::jsonb[], $8::jsonb[], $9::text[],
                 $10::text[], $11::text[], $12::timestamptz[])
       as t(id, agent_id, status, confidence, input_context, output_decision, metadata, search_text, content_salt,
            content_entry_id, created_at)`,
    [
      organizationId,
      rows.id,
      rows.agentId,
      rows.status,
      rows.confidence,
      rows.inputContext,
      rows.outputDecision,
      rows.metadata,
      rows.searchText,
      rows.contentSalt,
      rows.contentEntryId,
      rows.createdAt,
    ],
  );
}

/**
 * Appends `count` entries to the chain whose head is `chain` ({sequence, hash, g, ms}, advanced in place), with their
 * traces, in batches of BATCH rows inserted with unnest. Per batch: the entries and their bytes are built (the chain's hashes computed
 * with crypto.hash as the bytes are, since each entry's bytes start with the previous hash), then the hashing alone
 * is timed over those bytes, once with crypto.hash and once with createHash, their results checked against the chain.
 */
export async function appendEntries(db, chain, count, organizationId, agentIds) {
  const timing = { oneShotMs: 0, streamMs: 0, bytes: 0, insertMs: 0, buildMs: 0 };
  for (let done = 0, batchNo = 0; done < count; batchNo++) {
    const size = Math.min(BATCH, count - done);
    const building = performance.now();
    const cols = auditRows();
    const traces = traceRows();
    const salts = randomBytes(16 * size).toString('hex');
    const bufs = new Array(size);
    for (let i = 0; i < size; i++) {
      chain.g += 1;
      chain.sequence += 1;
      chain.ms += gapMs(chain.g);
      const content = traceContent(chain.g, salts.slice(32 * i, 32 * (i + 1)));
      const entry = traceEntry(
        chain.g,
        chain.sequence,
        organizationId,
        agentIds,
        chain.ms,
        contentHashOf(content.contentSalt, content),
      );
      traces.id.push(entry.targetId);
      traces.agentId.push(entry.metadata.agentId);
      traces.status.push(entry.eventType.slice('trace.'.length));
      traces.confidence.push(entry.metadata.confidence);
      traces.inputContext.push(JSON.stringify(content.inputContext));
      traces.outputDecision.push(JSON.stringify(content.outputDecision));
      traces.metadata.push(JSON.stringify(content.metadata));
      traces.searchText.push(`${content.inputContext.prompt}\n${content.outputDecision.text}`);
      traces.contentSalt.push(content.contentSalt);
      // The entry that records the trace's content hash, as the trace writer points at it.
      traces.contentEntryId.push(entry.id);
      traces.createdAt.push(entry.createdAt.toISOString());
      const buf = Buffer.from(`${chain.hash}\n${canonicalJson(hashedContent(entry))}`, 'utf8');
      const hash = oneShotHash('sha256', buf, 'hex');
      // The first entry of each batch against the service's own chainHash: the bytes are the ones it hashes.
      if (i === 0 && chainHash(chain.hash, entry) !== hash)
        throw new Incorrect(`seeding: hash of sequence ${entry.sequence} differs from chainHash`);
      bufs[i] = buf;
      timing.bytes += buf.length;
      addAuditRow(cols, entry.id, entry, chain.hash, hash);
      chain.hash = hash;
    }
    timing.buildMs += performance.now() - building;

    // The floor: the hashing alone, over the batch's bytes (the order of the two APIs alternates between batches).
    const digests = new Array(size);
    const timeOneShot = () => {
      const started = performance.now();
      for (let i = 0; i < size; i++) digests[i] = oneShotHash('sha256', bufs[i]);
      timing.oneShotMs += performance.now() - started;
      check('crypto.hash');
    };
    const timeStream = () => {
      const started = performance.now();
      for (let i = 0; i < size; i++) digests[i] = createHash('sha256').update(bufs[i]).digest('hex');
      timing.streamMs += performance.now() - started;
      check('createHash');
    };
    // Outside the timed loops: each API's digests are the chain's hashes.
    const check = (api) => {
      for (let i = 0; i < size; i++) {
        if (digests[i] !== cols.hash[i]) throw new Incorrect(`floor: ${api} differs at ${cols.sequence[i]}`);
        digests[i] = undefined;
      }
    };
    if (batchNo % 2 === 0) {
      timeOneShot();
      timeStream();
    } else {
      timeStream();
      timeOneShot();
    }

    const inserting = performance.now();
    await insertAuditEntries(db, organizationId, cols);
    await insertTraces(db, organizationId, traces);
    timing.insertMs += performance.now() - inserting;
    done += size;
  }
  return timing;
}

/** The organization's chain head in the database: {sequence, hash, ms} (sequence 0 and the genesis hash if empty). */
async function chainHead(db, organizationId) {
  const { rows } = await db.query(
    `select sequence, hash, created_at from audit_entries where organization_id = $1
       order by sequence desc limit 1`,
    [organizationId],
  );
  return rows.length === 0
    ? { sequence: 0, hash: GENESIS_HASH, ms: Date.now() }
    : { sequence: Number(rows[0].sequence), hash: rows[0].hash, ms: rows[0].created_at.getTime() };
}

/**
 * Seeds `entries` entries after the organization's own (registration, agents), continuing its chain; they end a few
 * seconds before now, each with its trace. The non-primary indexes of audit_entries and traces are dropped during the
 * load and rebuilt after it, then VACUUM ANALYZE. Returns the chain's head to append to, the time in the middle of the seeded entries, and the
 * figures: the load's timings and the hashing floor's.
 */
export async function seedChain(db, organizationId, agentIds, entries) {
  const head = await chainHead(db, organizationId);
  const t0 = Date.now();
  const chain = { sequence: head.sequence, hash: head.hash, g: 0, ms: t0 - 5_000 - entries * 3 };
  const midMs = chain.ms + Math.floor(entries / 2) * 3;
  const seedStart = performance.now();
  const indexes = await dropIndexes(db, ['audit_entries', 'traces']);
  const seeding = await appendEntries(db, chain, entries, organizationId, agentIds);
  const loaded = performance.now();
  await rebuildIndexes(db, indexes);
  const indexed = performance.now();
  await db.query('vacuum analyze audit_entries');
  await db.query('vacuum analyze traces');
  const analysed = performance.now();
  return {
    chain,
    midMs,
    preExisting: head.sequence,
    indexes: indexes.length,
    seeding,
    loadMs: loaded - seedStart,
    indexMs: indexed - loaded,
    vacuumMs: analysed - indexed,
  };
}
