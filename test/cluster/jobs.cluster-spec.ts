import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import type pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, type ClusterProcess, startCluster } from '../../tools/cluster/cluster.mjs';
import { MailCatcher } from '../support/mail-catcher.js';
import { call, createAgent, databaseOf, metricSum, type Owner, register, traceBody } from './support.js';

/** The intervals shortened through the environment, and the outbox's retry pass (the one parallel job). */
const SHORT_MS = 2000;
const OUTBOX_MS = 1000;
/** Every job, with its interval: the configured ones above, the others fixed in code (a new job must be added). */
const INTERVALS: Record<string, number> = {
  alerts: SHORT_MS,
  'scheduled-reports': SHORT_MS,
  'incident-notices': SHORT_MS,
  'trace-retention': SHORT_MS,
  'organization-erasure': SHORT_MS,
  'audit-checkpoints': 60_000,
  'revoked-tokens-purge': 600_000,
  'events-purge': 3_600_000,
  'outbox-purge': 3_600_000,
  'webhook-deliveries-purge': 3_600_000,
  'saml-requests-purge': 3_600_000,
  'sso-login-states-purge': 3_600_000,
  'sso-domain-recheck': 3_600_000,
  'alert-transitions-purge': 86_400_000,
  outbox: OUTBOX_MS,
};
const PARALLEL = ['outbox'];
const ONCE = Object.keys(INTERVALS).filter((name) => !PARALLEL.includes(name));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(50);
  }
}

interface Arrival {
  id: string;
  headers: IncomingHttpHeaders;
  body: string;
  type: string;
  status: number;
}

/**
 * A webhook receiver on loopback (node:http). With `refuseFirst`, the first attempt of each webhook-id is answered
 * 503 with `Retry-After: 1`, and every later one 200.
 */
async function receiver(refuseFirst: boolean): Promise<{ url: string; arrivals: Arrival[]; server: Server }> {
  const arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const id = String(req.headers['webhook-id']);
      const status = refuseFirst && !arrivals.some((a) => a.id === id) ? 503 : 200;
      const type = String((JSON.parse(body) as { type?: string }).type);
      arrivals.push({ id, headers: req.headers, body, type, status });
      res.writeHead(status, status === 503 ? { 'retry-after': '1' } : {}).end(status === 503 ? 'busy' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, arrivals, server };
}

/** Verifies a Standard Webhooks signature; the envelope. */
const verified = (secret: string, arrival: Arrival) =>
  new Webhook(secret).verify(arrival.body, arrival.headers as Record<string, string>) as { type: string };

/**
 * Every scheduled job across two workers (and two API processes with WORKERS=off): the once-per-period jobs run once
 * per period across both workers, proven by their metrics and by their effects (mail, webhooks, rows, log lines);
 * the outbox's retry pass runs on both, and still makes each webhook attempt once.
 */
describe('scheduled jobs on a cluster of two API processes and two workers', () => {
  let cluster: Cluster;
  let db: pg.Pool;
  let mail: MailCatcher;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  let channel: Awaited<ReturnType<typeof receiver>>;
  const ORGS = ['hooks', 'alerts', 'reports', 'incidents', 'retention', 'erased'] as const;
  const orgs = {} as Record<(typeof ORGS)[number], Owner>;
  let hookId: string;
  let hookSecret: string;
  let integrationSecret: string;
  let alertId: string;
  let reportId: string;
  let agent: { id: string; key: string };
  const OLD_TRACES = 7;
  /** Before the first worker was started, once it was ready, and once the second one was. */
  let firstStart: { before: number; ready: number };
  let secondReady: number;
  let workers: ClusterProcess[];

  const post = async (owner: Owner, path: string, body: unknown, status = 201) => {
    const res = await call(cluster.base, 'POST', path, { token: owner.token, body });
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(status);
    return res.body?.data;
  };
  const subjects = async (to: string) =>
    Promise.all(mail.forRecipient(to).map(async (m) => (await simpleParser(m.raw)).subject ?? ''));

  beforeAll(async () => {
    mail = await MailCatcher.start();
    hooks = await receiver(true);
    channel = await receiver(false);
    cluster = await startCluster({
      replicas: 2,
      // The workers start once the data exists (at start, each job runs if its period is over: here, all of them).
      workers: 0,
      env: {
        SMTP_URL: mail.url,
        ALERT_INTERVAL_MS: String(SHORT_MS),
        REPORT_SCHEDULER_INTERVAL_MS: String(SHORT_MS),
        INCIDENT_NOTICE_INTERVAL_MS: String(SHORT_MS),
        TRACE_RETENTION_INTERVAL_MS: String(SHORT_MS),
        ORG_ERASURE_INTERVAL_MS: String(SHORT_MS),
        OUTBOX_RETRY_INTERVAL_MS: String(OUTBOX_MS),
        // Every chain head with a new entry is due a checkpoint at the next run.
        AUDIT_CHECKPOINT_INTERVAL_ENTRIES: '1',
      },
      workerEnv: { LOG_LEVEL: 'info' },
    });
    db = databaseOf(cluster);
    for (const name of ORGS) orgs[name] = await register(cluster.base, `Jobs ${name}`);
    // Scheduled reports need the governance plan (set before the owner's first authenticated request).
    await db.query(`update organizations set plan = 'governance' where id = $1`, [orgs.reports.orgId]);

    const hook = await post(orgs.hooks, '/api/v1/webhooks', {
      url: hooks.url,
      events: ['audit.checkpoint'],
    });
    [hookId, hookSecret] = [hook.id, hook.secret];

    // An alert above its threshold: it fires at the first evaluation, notifying by e-mail and a signed webhook.
    agent = await createAgent(cluster.base, orgs.alerts.token);
    for (let i = 0; i < 3; i++) {
      expect(
        (await call(cluster.base, 'POST', '/api/v1/traces', { apiKey: agent.key, body: traceBody(i) }))
          .status,
      ).toBe(201);
    }
    const email = await post(orgs.alerts, '/api/v1/integrations', {
      type: 'email',
      name: 'Owner',
      config: { recipients: [orgs.alerts.email] },
    });
    const signed = await post(orgs.alerts, '/api/v1/integrations', {
      type: 'webhook',
      name: 'SIEM',
      config: { url: channel.url },
    });
    integrationSecret = signed.secret;
    alertId = (
      await post(orgs.alerts, '/api/v1/alerts', {
        name: 'Volume',
        metric: 'trace_volume',
        agentId: agent.id,
        comparison: 'gt',
        threshold: 2,
        windowMinutes: 60,
        integrationIds: [email.id, signed.id],
      })
    ).id;

    // A daily report, due at once; an incident overdue for reporting.
    reportId = (
      await post(orgs.reports, '/api/v1/reports/schedule', {
        name: 'Digest',
        frequency: 'daily',
        recipients: [orgs.reports.email],
      })
    ).id;
    await post(orgs.incidents, '/api/v1/incidents', {
      title: 'Leak',
      category: 'widespread_infringement',
      awareAt: new Date(Date.now() - 3 * 86_400_000).toISOString(),
    });

    // Traces past a 183-day retention.
    const old = await createAgent(cluster.base, orgs.retention.token);
    for (let i = 0; i < OLD_TRACES; i++) {
      expect(
        (await call(cluster.base, 'POST', '/api/v1/traces', { apiKey: old.key, body: traceBody(i) })).status,
      ).toBe(201);
    }
    await db.query(`update traces set created_at = now() - interval '200 days' where organization_id = $1`, [
      orgs.retention.orgId,
    ]);
    const retention = await call(cluster.base, 'PATCH', '/api/v1/organizations/current', {
      token: orgs.retention.token,
      body: { traceRetentionDays: 183 },
    });
    expect(retention.status, JSON.stringify(retention.body)).toBe(200);

    // An organization deleted, its grace over.
    const deleted = await call(cluster.base, 'DELETE', '/api/v1/organizations/current', {
      token: orgs.erased.token,
      body: { confirmName: orgs.erased.organizationName },
    });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(202);
    await db.query(`update organizations set erase_after = now() - interval '1 minute' where id = $1`, [
      orgs.erased.orgId,
    ]);

    // The first worker, then a second one.
    firstStart = { before: Date.now(), ready: 0 };
    await cluster.addWorker();
    firstStart.ready = Date.now();
    // Its start has claimed every period (none was claimed before) when the second one starts.
    await until(
      'the first start',
      async () => (await db.query('select name from scheduled_jobs')).rowCount === ONCE.length,
    );
    await cluster.addWorker();
    secondReady = Date.now();
    workers = cluster.workers;
  });
  afterAll(async () => {
    await db?.end();
    await cluster?.stop();
    await mail?.stop();
    for (const r of [hooks, channel]) r?.server.closeAllConnections();
    for (const r of [hooks, channel]) await new Promise((done) => r?.server.close(done));
  });

  it('makes each webhook attempt once: the first from the process that committed, the retry from one worker', async () => {
    // Test sends through the API processes, while both workers run the retry pass every second.
    const sends: string[] = [];
    for (let i = 0; i < 4; i++) {
      const delivery = await post(orgs.hooks, `/api/v1/webhooks/${hookId}/test`, {}, 200);
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1, responseStatus: 503 });
      sends.push(delivery.eventId);
    }
    const ids = () => [...new Set(hooks.arrivals.map((a) => a.id))];
    await until('every retry', () =>
      ids().every((id) => hooks.arrivals.filter((a) => a.id === id).length >= 2),
    );
    // Several more passes of both workers: nothing arrives twice.
    await sleep(3 * OUTBOX_MS);
    for (const id of ids()) {
      const attempts = hooks.arrivals.filter((a) => a.id === id);
      expect(
        attempts.map((a) => a.status),
        id,
      ).toEqual([503, 200]);
      for (const attempt of attempts) expect(verified(hookSecret, attempt).type).toBe(attempts[0]!.type);
    }
    expect(ids()).toEqual(expect.arrayContaining(sends));
    // The checkpoint the first worker signed at its start, delivered through the same retry.
    expect(
      ids().filter((id) => hooks.arrivals.find((a) => a.id === id)!.type === 'audit.checkpoint'),
    ).toHaveLength(1);
    const log = await call(cluster.base, 'GET', `/api/v1/webhooks/${hookId}/deliveries?limit=50`, {
      token: orgs.hooks.token,
    });
    expect(log.body.data).toHaveLength(ids().length);
    for (const delivery of log.body.data)
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  it('notifies each alert transition once, by e-mail and signed webhook', async () => {
    const history = async () =>
      (await call(cluster.base, 'GET', `/api/v1/alerts/${alertId}/history`, { token: orgs.alerts.token }))
        .body.data;
    await until('the alert to fire', async () => (await history()).length === 1);
    // The window's traces purged: the next evaluation resolves the alert.
    await post(
      orgs.alerts,
      '/api/v1/traces/purge',
      { before: new Date(Date.now() + 1000).toISOString() },
      200,
    );
    await until('the alert to resolve', async () => (await history()).length === 2);
    await until(
      'the notifications',
      async () => channel.arrivals.length >= 2 && mail.forRecipient(orgs.alerts.email).length >= 2,
    );
    // Several more evaluations by either worker: nothing more.
    await sleep(3 * SHORT_MS);
    expect((await history()).map((t: { from: string; to: string }) => `${t.from}>${t.to}`)).toEqual([
      'firing>ok',
      'ok>firing',
    ]);
    expect(channel.arrivals.map((a) => verified(integrationSecret, a).type)).toEqual([
      'alert.triggered',
      'alert.resolved',
    ]);
    const alertMails = (await subjects(orgs.alerts.email)).filter((s) => s.startsWith('Alert '));
    expect(alertMails).toEqual(['Alert triggered: Volume', 'Alert resolved: Volume']);
  });

  it('sends a scheduled report due now once, and an incident notice once', async () => {
    await until('the digest', async () =>
      (await subjects(orgs.reports.email)).some((s) => s.startsWith('Digest:')),
    );
    await until('the notice', async () =>
      (await subjects(orgs.incidents.email)).some((s) => s.includes('overdue')),
    );
    await sleep(2 * SHORT_MS);
    expect((await subjects(orgs.reports.email)).filter((s) => s.startsWith('Digest:'))).toHaveLength(1);
    const { rows } = await db.query('select sent_count from scheduled_reports where id = $1', [reportId]);
    expect(rows).toEqual([{ sent_count: 1 }]);
    expect((await subjects(orgs.incidents.email)).filter((s) => s.includes('overdue'))).toEqual([
      'Incident "Leak" is overdue for reporting',
    ]);
  });

  it('purges past the retention once, erases a deleted organization once, signs one checkpoint per organization', async () => {
    const purged = await db.query(
      `select metadata from audit_entries where organization_id = $1 and event_type = 'traces.purged'`,
      [orgs.retention.orgId],
    );
    expect(purged.rows.map((r) => r.metadata)).toEqual([
      expect.objectContaining({ purged: OLD_TRACES, trigger: 'retention' }),
    ]);
    expect(
      (await db.query('select id from traces where organization_id = $1', [orgs.retention.orgId])).rows,
    ).toEqual([]);

    expect((await db.query('select id from organizations where id = $1', [orgs.erased.orgId])).rows).toEqual(
      [],
    );
    const erasures = workers
      .flatMap((w) => cluster.logs(w.name).split('\n'))
      .filter((line) => line.includes('Organization erased') && line.includes(orgs.erased.orgId));
    expect(erasures.filter((line) => line.includes('"complete":true'))).toHaveLength(1);

    // One checkpoints run (the first worker's, at its start) signed each chain once, though entries came after it.
    const runs = await Promise.all(
      workers.map(async (w) =>
        metricSum(await w.metrics(), 'governance_job_runs_total', {
          job_name: 'audit-checkpoints',
          result: 'success',
        }),
      ),
    );
    expect(runs.reduce((a, b) => a + b)).toBe(1);
    const { rows } = await db.query<{ organization_id: string; n: string }>(
      'select organization_id, count(*) as n from audit_checkpoints group by organization_id',
    );
    const live = Object.values(orgs)
      .filter((o) => o !== orgs.erased)
      .map((o) => o.orgId);
    expect(rows.filter((r) => live.includes(r.organization_id)).map((r) => Number(r.n))).toEqual(
      live.map(() => 1),
    );
  });

  it('ran every once-per-period job once per period across both workers, the parallel pass on both, nothing on the API', async () => {
    const texts = await Promise.all(workers.map((w) => w.metrics()));
    const elapsed = { max: Date.now() - firstStart.before, min: Date.now() - firstStart.ready };
    const sum = (name: string, job: string, labels: Record<string, string> = {}) =>
      texts.map((t) => metricSum(t, name, { job_name: job, ...labels }));
    const jobs = new Set(
      [...texts[0]!.matchAll(/^governance_job_runs_total\{job_name="([^"]+)"/gm)].map((m) => m[1]),
    );
    expect([...jobs].sort()).toEqual(Object.keys(INTERVALS).sort());
    for (const job of ONCE) {
      const interval = INTERVALS[job]!;
      const runs = sum('governance_job_runs_total', job, { result: 'success' });
      const total = runs[0]! + runs[1]!;
      // One run at the first start, then one per interval: a period is claimed at most a twentieth early.
      const most = Math.floor(elapsed.max / (interval - Math.min(1000, interval / 20))) + 1;
      const least = Math.floor(elapsed.min / (interval + 1000));
      expect({ job, total, ok: total >= least && total <= most }).toEqual({ job, total, ok: true });
      expect(sum('governance_job_runs_total', job, { result: 'failure' })).toEqual([0, 0]);
      const lost = sum('governance_job_claims_lost_total', job);
      if (interval > elapsed.max) {
        // Not a period since the start: the first worker ran it at its start, the second lost the period at its own.
        expect({ job, runs, lost }).toEqual({ job, runs: [1, 0], lost: [0, 1] });
      } else {
        // Each period since the second start was claimed by one worker and lost by the other one's tick in it.
        const periods = Math.floor((Date.now() - secondReady) / (interval + 1000));
        expect({ job, lost: lost[0]! + lost[1]! >= periods - 1 }).toEqual({ job, lost: true });
      }
    }
    // The retry pass is not claimed: each worker runs it every second (a pass and a second), from its start.
    const passes = sum('governance_job_runs_total', 'outbox', { result: 'success' });
    const since = [firstStart.ready, secondReady].map((at) =>
      Math.floor((Date.now() - at) / (2 * OUTBOX_MS)),
    );
    expect(passes.map((n, i) => n >= since[i]!)).toEqual([true, true]);
    // The API processes (WORKERS=off) schedule nothing; every period was claimed by a worker.
    for (const replica of cluster.replicas)
      expect(await replica.metrics()).not.toMatch(/^governance_job_runs_total\{/m);
    const { rows } = await db.query<{ name: string; last_run_by: string }>(
      'select name, last_run_by from scheduled_jobs',
    );
    expect(rows.map((r) => r.name).sort()).toEqual([...ONCE].sort());
    const pids = workers.map((w) => String(w.pid));
    for (const row of rows) expect(pids).toContain(row.last_run_by.split(':').at(-2));
  });
});
