#!/usr/bin/env node
// Renders the pictures of the compliance PDF shown in docs/compliance-officers.md ("The compliance PDF"):
//
//   DATABASE_URL=postgres://… node tools/docs/render-report.mjs [--out docs/images] [--pages 3] [--resolution 80]
//                                                               [--pdf report.pdf] [--ref <commit> | --worktree]
//
// It compiles the service (the commit of --ref, HEAD by default, or the working tree with --worktree) into a
// temporary folder of its own (so it never touches `dist/`), starts it on a scratch
// PostgreSQL database of the server of DATABASE_URL (created here and dropped afterwards, as the benchmarks do), and
// gives one organization, "Northwind Lending", a realistic month: three agents, five policies, about 900 traces over
// the last 30 days (most approved, some flagged for review and decided, a few blocked), open incidents, attested
// clauses of the three frameworks and three impact assessments. Traces are sent over HTTP, so every figure, review
// item and audit entry is the service's own; only their times are then spread over the month with SQL, before any
// report has read them. The data is drawn from a fixed seed, so two runs give the same totals; the dates differ, and
// (traces being sent ten at a time) which trace falls on which day.
//
// Then GET /api/v1/reports/compliance prints the PDF with Chromium (the service looks for it as always: CHROMIUM_PATH,
// the system's, or the bundled one), and pdftoppm (poppler-utils) writes its first pages as PNG:
// compliance-report.png (page 1) and compliance-report-page-<n>.png for the next ones.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DAY = 86_400_000;

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : process.argv[index + 1];
}
const OUT = resolve(option('out', join(root, 'docs', 'images')));
const PAGES = Number(option('pages', '3'));
const RESOLUTION = Number(option('resolution', '80'));
const KEEP_PDF = option('pdf', undefined);

if (!process.env.DATABASE_URL) {
  process.stderr.write(
    'render-report: set DATABASE_URL to a PostgreSQL server (a scratch database is made there)\n',
  );
  process.exit(2);
}
if (spawnSync('pdftoppm', ['-v']).error) {
  process.stderr.write('render-report: pdftoppm is missing (Debian: apt-get install poppler-utils)\n');
  process.exit(2);
}

/** A deterministic random source (mulberry32), so the sample data is the same on every run. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = random(20261127);
const pick = (list) => list[Math.floor(rand() * list.length)];

// The service, compiled into a folder of its own: dist/ of the checkout is left alone. The source is the commit
// given by --ref (HEAD by default), taken with `git archive`, so edits in progress in the working tree cannot break
// the build; --worktree compiles the working tree instead.
const work = mkdtempSync(join(tmpdir(), 'governance-render-'));
let source = root;
if (!process.argv.includes('--worktree')) {
  source = join(work, 'src');
  mkdirSync(source);
  const archive = execFileSync(
    'git',
    ['archive', option('ref', 'HEAD'), 'apps', 'libs', 'drizzle', 'package.json', '.swcrc'],
    {
      cwd: root,
      maxBuffer: 1 << 30,
    },
  );
  execFileSync('tar', ['-x', '-C', source], { input: archive });
}
process.stdout.write(
  `render-report: building the service (${source === root ? 'the working tree' : option('ref', 'HEAD')})\n`,
);
execFileSync(
  join(root, 'node_modules', '.bin', 'swc'),
  ['apps', 'libs', '-d', join(work, 'dist'), '--config-file', '.swcrc', '--quiet'],
  { cwd: source, stdio: 'inherit' },
);
cpSync(join(source, 'drizzle'), join(work, 'dist', 'drizzle'), { recursive: true });
// The package's `imports` (#platform …) resolve from the nearest package.json: a copy beside the build.
writeFileSync(join(work, 'package.json'), readFileSync(join(source, 'package.json')));
symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'), 'dir');
process.env.BENCH_DIST = join(work, 'dist');

const { startService } = await import('../../bench/support.mjs');
const server = await startService({
  env: {
    LOG_LEVEL: 'warn',
    DEFAULT_PLAN: 'governance',
    ...(process.env.CHROMIUM_PATH ? { CHROMIUM_PATH: process.env.CHROMIUM_PATH } : {}),
  },
});
const base = server.base;
const db = new pg.Pool({ connectionString: server.databaseUrl, max: 2 });

async function call(method, path, { token, key, body, expect = [200, 201, 202, 204, 403] } = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(key ? { 'x-api-key': key } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!expect.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

try {
  process.stdout.write('render-report: seeding a month of Northwind Lending\n');
  const registered = await call('POST', '/api/v1/auth/register', {
    body: {
      name: 'Maria Keller',
      email: `maria.keller+${Date.now()}@northwind-lending.example`,
      password: 'Report-Sample-2026',
      organizationName: 'Northwind Lending',
    },
  });
  const token = registered.data.token;
  const as = { token };

  const agents = {};
  for (const name of ['Credit assistant', 'Collections agent', 'Customer support bot']) {
    const created = await call('POST', '/api/v1/agents', { ...as, body: { name } });
    agents[name] = { id: created.data.id, key: created.data.apiKey };
  }

  const policies = [
    {
      name: 'No card numbers in prompts',
      outcome: 'block',
      conditions: [{ field: 'inputContext.prompt', operator: 'contains', value: 'card number' }],
    },
    {
      name: 'Low confidence needs a human',
      outcome: 'flag',
      conditions: [{ field: 'confidence', operator: 'lt', value: 0.6 }],
    },
    {
      name: 'Credit limit increases over 5,000',
      outcome: 'flag',
      match: 'all',
      conditions: [
        { field: 'outputDecision.action', operator: 'equals', value: 'raise_limit' },
        { field: 'metadata.amount', operator: 'gt', value: 5000 },
      ],
    },
  ];
  for (const body of policies) await call('POST', '/api/v1/policies', { ...as, body });
  for (const templateId of ['email-in-output', 'prompt-injection'])
    await call('POST', '/api/v1/policies', { ...as, body: { templateId } });

  // About 900 decisions: support questions, credit decisions and collection steps.
  const traces = [];
  const support = [
    ['When is my next instalment due?', 'Your next instalment of 240.00 is due on the 15th.'],
    ['How do I update my address?', 'You can update your address under Profile, then Contact details.'],
    [
      'Can I repay my loan early?',
      'Yes, early repayment is free of charge; the remaining interest is waived.',
    ],
  ];
  for (let i = 0; i < 900; i++) {
    const kind = rand();
    let agent;
    let body;
    if (kind < 0.45) {
      agent = agents['Customer support bot'];
      const [prompt, text] = pick(support);
      const cardNumber = rand() < 0.025;
      body = {
        inputContext: { prompt: cardNumber ? `${prompt} My card number is 4111 1111 1111 1111.` : prompt },
        outputDecision: { action: 'llm_response', text },
        confidence: 0.7 + rand() * 0.29,
      };
    } else if (kind < 0.8) {
      agent = agents['Credit assistant'];
      const amount = Math.round(500 + rand() * 9500);
      const raise = rand() < 0.35;
      body = {
        inputContext: { prompt: `Application ${10_000 + i}: credit limit review, requested ${amount}.` },
        outputDecision: {
          action: raise ? 'raise_limit' : 'keep_limit',
          text: raise ? `Raise the limit by ${amount}.` : 'Keep the current limit.',
        },
        confidence: rand() < 0.12 ? 0.35 + rand() * 0.2 : 0.75 + rand() * 0.24,
        metadata: { amount, channel: 'web' },
      };
    } else {
      agent = agents['Collections agent'];
      body = {
        inputContext: { prompt: `Account ${20_000 + i} is 30 days overdue. Propose the next step.` },
        outputDecision: {
          action: 'payment_plan',
          text: 'Offer a three-month payment plan.',
          toolCalls: [{ name: 'send_letter', arguments: { template: 'payment-plan' } }],
        },
        confidence: rand() < 0.08 ? 0.4 + rand() * 0.15 : 0.8 + rand() * 0.19,
      };
    }
    body.confidence = Math.round(body.confidence * 100) / 100;
    traces.push({ key: agent.key, body });
  }
  for (let i = 0; i < traces.length; i += 10) {
    await Promise.all(
      traces.slice(i, i + 10).map(({ key, body }) => call('POST', '/api/v1/traces', { key, body })),
    );
  }

  // Spread the traces over the last 30 days (fewer at weekends), before any report has rolled a day up; review
  // items follow their trace.
  const now = Date.now();
  const { rows } = await db.query('select id from traces order by id');
  for (const { id } of rows) {
    let at;
    do at = now - 2 * 3_600_000 - rand() * (30 * DAY - 4 * 3_600_000);
    while ([0, 6].includes(new Date(at).getUTCDay()) && rand() < 0.6);
    await db.query('update traces set created_at = $2, updated_at = $2 where id = $1', [id, new Date(at)]);
  }
  await db.query(
    `update review_items r set created_at = t.created_at, updated_at = t.created_at
       from traces t where t.id = r.trace_id`,
  );

  // Reviewers decide what was flagged, oldest first; the last days' items wait, two of them escalated.
  const queue = [];
  for (let page = 1; ; page++) {
    const listed = await call('GET', `/api/v1/review-queue?limit=100&page=${page}`, as);
    queue.push(...listed.data);
    if (page >= listed.pagination.totalPages) break;
  }
  queue.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  for (const [n, item] of queue.entries()) {
    if (n >= queue.length - 11) break; // the most recent stay pending
    const decision = n >= queue.length - 13 ? 'escalate' : rand() < 0.8 ? 'approve' : 'reject';
    await call('POST', `/api/v1/review-queue/${item.id}/decision`, {
      ...as,
      body: { decision, notes: decision === 'reject' ? 'Outside the credit policy' : 'Within policy' },
    });
  }

  // Open incidents: one overdue, two within their deadline.
  const hoursAgo = (h) => new Date(now - h * 3_600_000).toISOString();
  const incidents = [
    {
      title: 'Credit assistant refused applicants by postcode',
      category: 'widespread_infringement',
      awareAt: hoursAgo(70),
      agentId: agents['Credit assistant'].id,
    },
    {
      title: 'Scoring outage at a hospital supplier customer',
      category: 'critical_infrastructure',
      awareAt: hoursAgo(20),
    },
    {
      title: 'Collections letter sent to a customer under insolvency protection',
      category: 'other',
      awareAt: hoursAgo(4 * 24),
      agentId: agents['Collections agent'].id,
    },
  ];
  for (const body of incidents) await call('POST', '/api/v1/incidents', { ...as, body });

  // Impact assessments: one approved, one in review, one draft.
  const fria = async (body, steps) => {
    const created = await call('POST', '/api/v1/fria', { ...as, body });
    for (const status of steps)
      await call('POST', `/api/v1/fria/${created.data.id}/transition`, { ...as, body: { status } });
    return created.data.id;
  };
  const approvedFria = await fria(
    {
      systemName: 'Credit scoring',
      purpose: 'Consumer credit limit decisions',
      affectedPersons: 'Applicants and existing customers',
      usageContext: 'Online applications, reviewed by credit officers',
      durationOfUse: 'Continuous',
      humanOversightSummary: 'Limit increases over 5,000 and low-confidence decisions go to a credit officer',
      complaintsMechanism: 'Complaints form and the ombudsman',
      identifiedRisks: [
        {
          title: 'Indirect discrimination',
          severity: 'high',
          affectedRights: ['non-discrimination'],
          mitigation: 'Quarterly bias audit',
        },
      ],
    },
    ['review', 'approved'],
  );
  await fria({ systemName: 'Collections prioritisation', purpose: 'Ordering overdue accounts' }, ['review']);
  await fria({ systemName: 'Support triage', purpose: 'Routing customer questions' }, []);

  // Attested clauses of the three frameworks.
  const notes = [
    ['eu-ai-act', 'art-9', 'covered', 'Risk register reviewed monthly'],
    ['eu-ai-act', 'art-12', 'covered', 'Hash-chained audit log with signed checkpoints'],
    ['eu-ai-act', 'art-14', 'covered', 'Review queue for flagged decisions'],
    [
      'eu-ai-act',
      'art-27',
      'covered',
      'FRIA approved for credit scoring',
      [{ type: 'fria', id: approvedFria }],
    ],
    ['eu-ai-act', 'art-10', 'partial', 'Training data documentation in progress'],
    ['eu-ai-act', 'art-73', 'partial', 'Incident procedure drafted'],
    ['eu-ai-act', 'art-43', 'not-applicable', 'Not a product under Annex I'],
    ['iso-42001', '4', 'covered', 'Scope statement approved by the board'],
    ['iso-42001', '5', 'covered', 'AI policy published'],
    ['iso-42001', '6.1.4', 'covered', 'Impact assessment procedure', [{ type: 'fria', id: approvedFria }]],
    ['iso-42001', '8.4', 'partial', 'Assessments for two of three systems'],
    ['iso-42001', 'A.5', 'partial', 'Assessment templates adopted'],
    ['nist-rmf', 'GOVERN-1', 'covered', 'Policies and roles documented'],
    ['nist-rmf', 'MAP-1', 'covered', 'Context of use recorded per system'],
    ['nist-rmf', 'MEASURE-1', 'partial', 'Confidence and override rates tracked'],
    ['nist-rmf', 'MANAGE-4', 'partial', 'Incident response being tested'],
  ];
  for (const [framework, clauseId, status, evidence, evidenceRefs] of notes) {
    await call('PATCH', '/api/v1/compliance/mapping', {
      ...as,
      body: { framework, clauseId, status, evidence, ...(evidenceRefs ? { evidenceRefs } : {}) },
    });
  }

  process.stdout.write('render-report: GET /api/v1/reports/compliance\n');
  const res = await fetch(`${base}/api/v1/reports/compliance`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const pdf = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200 || pdf.subarray(0, 5).toString('latin1') !== '%PDF-')
    throw new Error(`GET /reports/compliance: ${res.status} ${pdf.subarray(0, 300).toString('utf8')}`);
  const pdfPath = join(work, 'report.pdf');
  writeFileSync(pdfPath, pdf);
  if (KEEP_PDF) writeFileSync(resolve(KEEP_PDF), pdf);

  execFileSync('pdftoppm', [
    '-r',
    String(RESOLUTION),
    '-png',
    '-f',
    '1',
    '-l',
    String(PAGES),
    pdfPath,
    join(work, 'page'),
  ]);
  for (let n = 1; n <= PAGES; n++) {
    const made = [`page-${n}.png`, `page-0${n}.png`, `page-00${n}.png`].map((f) => join(work, f));
    const from = made.find((f) => {
      try {
        return statSync(f).isFile();
      } catch {
        return false;
      }
    });
    if (!from) break;
    const to = join(OUT, n === 1 ? 'compliance-report.png' : `compliance-report-page-${n}.png`);
    copyFileSync(from, to);
    process.stdout.write(`render-report: wrote ${to} (${Math.round(statSync(to).size / 1024)} KiB)\n`);
  }
  process.stdout.write(`render-report: the PDF has ${pdf.length} bytes\n`);
} finally {
  await db.end();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
