// The ingestion workload that bench:ingest and bench:observability share: three organizations with five active
// policies each, traces of which about 10 % are flagged and 2 % blocked, sent with the organizations' agent keys in
// turn; and the floor they are compared with, a bare Fastify route that inserts the same row with node-postgres.
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
import { expectJson, freePort, registerOrganization } from './support.mjs';

export const ORGS = 3;

export const POLICIES = [
  { name: 'E-mail in output', outcome: 'flag', conditions: [{ field: 'outputDecision.text', operator: 'matches', value: '[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}' }] },
  { name: 'Low confidence', outcome: 'flag', conditions: [{ field: 'confidence', operator: 'lt', value: 0.2 }] },
  { name: 'Secret in output', outcome: 'block', conditions: [{ field: 'outputDecision.text', operator: 'matches', value: '(sk-[a-z0-9]{20,}|AKIA[0-9A-Z]{16})' }] },
  { name: 'Destructive tool', outcome: 'block', conditions: [{ field: 'toolCalls.name', operator: 'in', value: ['drop_table', 'delete_all'] }] },
  { name: 'Injection', outcome: 'flag', conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'ignore previous instructions' }] },
];

/**
 * Each trace names the person it is about (`subjectRef`, one of 5,000 customers), as a deployment that answers
 * people's rights does; `BENCH_SUBJECTS=off` sends none (the workload before subjects existed).
 */
const SUBJECTS = process.env.BENCH_SUBJECTS !== 'off';

/**
 * `BENCH_PII=on`: each organization also has a policy that flags prompts holding an IBAN or a card (`containsPii`:
 * every prompt is scanned, none holds one, so the outcomes stay those of the other policies), and masks every PII type
 * the detectors know at ingestion (`piiMasking`, redact). Off by default: the run to compare with is the same traces
 * without them. Either way 5 % of the outputs quote an IBAN, so that masking has work to do.
 */
export const PII = process.env.BENCH_PII === 'on';
const PII_POLICY = {
  name: 'Bank account or card in the prompt',
  outcome: 'flag',
  conditions: [{ field: 'inputContext.prompt', operator: 'containsPii', value: ['iban', 'creditCard'] }],
};
const PII_MASKING = {
  entities: ['email', 'phone', 'creditCard', 'iban', 'ipAddress', 'usSsn', 'ukNino', 'deTaxId', 'frNir', 'esDni', 'itFiscalCode', 'nlBsn', 'plPesel'],
  mode: 'redact',
};

/** Trace i: 2 % blocked (a secret in the output), 10 % flagged (low confidence), the rest approved. */
export function traceBody(i) {
  const blocked = i % 50 === 0;
  const flagged = !blocked && i % 10 === 5;
  return JSON.stringify({
    inputContext: { prompt: `Customer ${i} asks about the refund policy for order ${i * 7}.` },
    outputDecision: {
      action: 'llm_response',
      text: blocked
        ? `Use the key sk-${'a'.repeat(24)} for order ${i * 7}.`
        : i % 20 === 3
          ? `The refund for order ${i * 7} goes to IBAN DE89 3704 0044 0532 0130 00 within 30 days.`
          : `Refunds are possible within 30 days for order ${i * 7}.`,
    },
    metadata: { channel: 'chat', region: 'eu' },
    confidence: flagged ? 0.1 : 0.92,
    ...(SUBJECTS ? { subjectRef: `customer-${i % 5000}` } : {}),
  });
}

/** ORGS organizations on the service at `base`, each with the policies and one agent: their tokens, ids and keys. */
export async function setUpOrganizations(base) {
  const orgs = [];
  for (let o = 0; o < ORGS; o++) {
    const owner = await registerOrganization(base, `bench-${o}`);
    const auth = { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` };
    for (const policy of PII ? [...POLICIES, PII_POLICY] : POLICIES) {
      await expectJson(await fetch(`${base}/api/v1/policies`, { method: 'POST', headers: auth, body: JSON.stringify(policy) }));
    }
    if (PII) {
      await expectJson(
        await fetch(`${base}/api/v1/organizations/current`, {
          method: 'PATCH',
          headers: auth,
          body: JSON.stringify({ piiMasking: PII_MASKING }),
        }),
      );
    }
    const agent = await expectJson(
      await fetch(`${base}/api/v1/agents`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `agent-${o}` }) }),
    );
    orgs.push({ token: owner.token, orgId: owner.orgId, agentId: agent.data.id, key: agent.data.apiKey });
  }
  return orgs;
}

/** autocannon's requests: POST /api/v1/traces, the next trace each time, with the organizations' keys in turn. */
export function traceRequests(orgs) {
  let n = 0;
  return [
    {
      method: 'POST',
      path: '/api/v1/traces',
      setupRequest: (req) => {
        n += 1;
        const org = orgs[n % orgs.length];
        return { ...req, headers: { 'content-type': 'application/json', 'x-api-key': org.key }, body: traceBody(n) };
      },
    },
  ];
}

/**
 * The floor: a bare Fastify route that inserts the row the service would, through a pool of 20 connections. Its
 * databases are services', each given with the organizations and agents set up there (`[{ databaseUrl, orgs }]`):
 * with several, the inserts go to each in turn, so that the floor grows every service's tables alike. `url` and
 * `requests` are autocannon's.
 */
export async function startFloor(databases) {
  const targets = databases.map(({ databaseUrl, orgs }) => ({
    orgs,
    pool: new pg.Pool({ connectionString: databaseUrl, max: Math.max(2, Math.ceil(20 / databases.length)) }),
  }));
  const app = Fastify({ logger: false });
  let f = 0;
  app.post('/floor', async (request) => {
    f += 1;
    const { pool, orgs } = targets[f % targets.length];
    const org = orgs[f % orgs.length];
    const id = randomBytes(12).toString('hex');
    const body = request.body;
    await pool.query(
      `insert into traces (id, organization_id, agent_id, status, confidence, input_context, output_decision, metadata,
        schema_version, search_text, created_at, updated_at)
       values ($1, $2, $3, 'approved', $4, $5, $6, $7, '2026-04-11', $8, now(), now())`,
      [id, org.orgId, org.agentId, body.confidence, body.inputContext, body.outputDecision, body.metadata, `${body.inputContext.prompt}\n${body.outputDecision.text}`],
    );
    return { success: true, data: { id, status: 'approved' } };
  });
  const port = await freePort();
  await app.listen({ port, host: '127.0.0.1' });
  let n = 0;
  const requests = [
    { method: 'POST', path: '/floor', setupRequest: (req) => ({ ...req, headers: { 'content-type': 'application/json' }, body: traceBody(++n) }) },
  ];
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      await app.close();
      for (const { pool } of targets) await pool.end();
    },
  };
}
