import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENV_REFERENCE } from '../../libs/platform/src/config/env-reference.js';
import {
  answeredBy,
  eventually,
  freePort,
  haproxyBinary,
  localConfig,
  type Replica,
  send,
  startHaproxy,
  startReplica,
  stopReplica,
} from './haproxy.js';
import {
  composeSeconds,
  documentedDefault,
  HAPROXY_CFG,
  isServiceVariable,
  type Manifest,
  ofKind,
  podTemplates,
  readCompose,
  readKustomization,
  readManifests,
  ROOT,
  selects,
  validateManifest,
} from './manifests.js';

const { files, manifests } = readManifests();
const object = ({ file: _file, ...rest }: Manifest) => rest as Manifest;
const named = (kind: string, name: string): Manifest => {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const [configMap] = ofKind(manifests, 'ConfigMap');
const [secret] = ofKind(manifests, 'Secret');
const api = named('Deployment', 'governance-api');
const worker = named('Deployment', 'governance-worker');
const migrate = named('Job', 'governance-migrate');
const templates = podTemplates(manifests);
const podSpec = (m: Manifest) => m.spec.template.spec as IPodSpec;
const container = (m: Manifest) => podSpec(m).containers[0] as IContainer;
const envValue = (m: Manifest, name: string) => container(m).env?.find((e) => e.name === name)?.value;
/** The workloads whose pods a selector selects, by name. */
const selected = (selector: Parameters<typeof selects>[0]) =>
  templates.filter((t) => selects(selector, t.template.metadata?.labels)).map((t) => t.owner.metadata.name);
const portNames = (m: Manifest) => (container(m).ports ?? []).map((p) => p.name);
/** A setting as the pods get it: the ConfigMap's value, else the default ENV_REFERENCE documents. */
const setting = (name: string) => Number(configMap.data[name] ?? documentedDefault(name));

const DOCKERFILE = readFileSync(`${ROOT}Dockerfile`, 'utf8');
const IMAGE_UID = Number(/^USER (\d+):\d+$/m.exec(DOCKERFILE)?.[1]);
const IMAGE_PORT = Number(/^\s*PORT=(\d+)/m.exec(DOCKERFILE)?.[1]);
const COMPOSE_TEXT = readFileSync(`${ROOT}docker-compose.yml`, 'utf8');
/** The worker's command as tools/artefact/smoke.mjs reads it from the compose file (the same expression). */
const COMPOSE_WORKER_COMMAND = JSON.parse(
  /^ {2}worker:\n(?: {4}.*\n|\n)*? {4}command: (\[.*\])$/m.exec(COMPOSE_TEXT)?.[1] ?? 'null',
) as string[] | null;
const HAPROXY_TEXT = readFileSync(HAPROXY_CFG, 'utf8');

describe('the Kubernetes manifests (deploy/kubernetes)', () => {
  it('are each of a known kind and valid against the schemas of a current Kubernetes and the Prometheus Operator', () => {
    expect(files.length).toBeGreaterThanOrEqual(10);
    expect(new Set(manifests.map((m) => m.kind))).toEqual(
      new Set(
        ['Namespace', 'ConfigMap', 'Secret', 'Deployment', 'Service', 'HorizontalPodAutoscaler'].concat([
          'PodDisruptionBudget',
          'Job',
          'NetworkPolicy',
          'ServiceMonitor',
          'PodMonitor',
        ]),
      ),
    );
    for (const m of manifests) {
      expect(() => validateManifest(object(m)), `${m.file}: ${m.kind} ${m.metadata?.name}`).not.toThrow();
    }
    const ids = manifests.map((m) => `${m.kind}/${m.metadata.name}`);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('refuse a broken object, an unknown kind and an unquoted on/off, so the validation bites', () => {
    const broken = structuredClone(object(api));
    broken.spec.replicas = 'two';
    expect(() => validateManifest(broken)).toThrow(/replicas must be integer/);
    const portless = structuredClone(object(named('Service', 'governance-api')));
    delete portless.spec.ports[0].port;
    expect(() => validateManifest(portless)).toThrow(/spec\/ports\/0 must have required property port/);
    const monitor = structuredClone(object(named('ServiceMonitor', 'governance-api')));
    monitor.spec.endpoints = 'metrics';
    expect(() => validateManifest(monitor)).toThrow(/endpoints must be array/);
    expect(() => validateManifest({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' })).toThrow(
      /unknown kind/,
    );
    expect(() => validateManifest({ apiVersion: 'apps/v1beta1', kind: 'Deployment' })).toThrow(
      /unknown kind/,
    );
    // Kubernetes reads YAML 1.1, where `off` is false: the manifests are read the same way, and the schema refuses it.
    const unquoted = structuredClone(object(api));
    unquoted.spec.template.spec.containers[0].env = [
      parse('{ name: WORKERS, value: off }', { version: '1.1' }),
    ];
    expect(() => validateManifest(unquoted)).toThrow(/value must be string/);
  });

  it('are listed in kustomization.yaml, each file once, in its namespace, with its image', () => {
    const kustomization = readKustomization();
    expect([...kustomization.resources].sort()).toEqual(files);
    for (const m of manifests) {
      if (m.kind === 'Namespace') expect(m.metadata.name).toBe(kustomization.namespace);
      else
        expect(m.metadata, `${m.kind} ${m.metadata.name}`).toMatchObject({
          namespace: kustomization.namespace,
        });
    }
    const images = templates.flatMap((t) => t.template.spec!.containers.map((c) => c.image));
    expect(new Set(images)).toEqual(new Set(kustomization.images.map((i) => i.name)));
  });

  it('select what exists: pods by their workload, the Service, budget, autoscaler, policies and monitors', () => {
    for (const t of templates)
      expect(selected(t.owner.spec.selector ?? t.template.metadata?.labels)).toContain(t.owner.metadata.name);
    for (const d of ofKind(manifests, 'Deployment'))
      expect(selected(d.spec.selector)).toEqual([d.metadata.name]);

    const [service] = ofKind(manifests, 'Service');
    expect(selected(service.spec.selector)).toEqual(['governance-api']);
    for (const port of service.spec.ports) expect(portNames(api)).toContain(port.targetPort);
    expect(selected(ofKind(manifests, 'PodDisruptionBudget')[0].spec.selector)).toEqual(['governance-api']);
    const [hpa] = ofKind(manifests, 'HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'governance-api',
    });

    for (const policy of ofKind(manifests, 'NetworkPolicy')) {
      const pods = selected(policy.spec.podSelector);
      expect(pods, policy.metadata.name).toHaveLength(1);
      for (const rule of policy.spec.ingress ?? []) {
        for (const port of rule.ports)
          expect(
            portNames(named(pods[0] === 'governance-migrate' ? 'Job' : 'Deployment', pods[0])),
          ).toContain(port.port);
      }
    }
    for (const monitor of ofKind(manifests, 'ServiceMonitor')) {
      const services = ofKind(manifests, 'Service').filter((s) =>
        selects(monitor.spec.selector, s.metadata.labels),
      );
      expect(services.map((s) => s.metadata.name)).toEqual(['governance-api']);
      for (const e of monitor.spec.endpoints)
        expect(services[0].spec.ports.map((p: { name: string }) => p.name)).toContain(e.port);
    }
    for (const monitor of ofKind(manifests, 'PodMonitor')) {
      expect(selected(monitor.spec.selector)).toEqual(['governance-worker']);
      for (const e of monitor.spec.podMetricsEndpoints) expect(portNames(worker)).toContain(e.port);
    }
  });

  it('name only variables the service reads, and only keys the Secret and the ConfigMap hold', () => {
    for (const key of Object.keys(configMap.data)) {
      expect(isServiceVariable(key), `ConfigMap ${key}`).toBe(true);
      expect(
        (ENV_REFERENCE as Record<string, { secret?: true }>)[key]?.secret,
        `${key} is a secret`,
      ).toBeUndefined();
    }
    for (const key of Object.keys(secret.stringData))
      expect(isServiceVariable(key), `Secret ${key}`).toBe(true);
    for (const { owner, template } of templates) {
      for (const c of template.spec!.containers) {
        for (const from of c.envFrom ?? []) {
          expect(from, owner.metadata.name).toEqual({ configMapRef: { name: configMap.metadata.name } });
        }
        for (const e of c.env ?? []) {
          expect(isServiceVariable(e.name), `${owner.metadata.name}: ${e.name}`).toBe(true);
          const ref = e.valueFrom?.secretKeyRef;
          if (ref) {
            expect(ref.name).toBe(secret.metadata.name);
            expect(Object.keys(secret.stringData), `${owner.metadata.name}: ${e.name}`).toContain(ref.key);
          }
          const cm = e.valueFrom?.configMapKeyRef;
          if (cm) expect(Object.keys(configMap.data)).toContain(cm.key);
        }
      }
    }
  });

  it('hold no real secret: every value of the Secret is a marked placeholder, or empty', () => {
    expect(secret.data).toBeUndefined();
    for (const [key, value] of Object.entries(secret.stringData as Record<string, string>)) {
      expect(value === '' || value.includes('REPLACE_ME'), `${key}: ${value}`).toBe(true);
    }
    for (const [name, doc] of Object.entries(ENV_REFERENCE)) {
      if (doc.secret && name in configMap.data) throw new Error(`${name} is a secret, in the ConfigMap`);
    }
  });

  it("probe /health/live and /health/ready on the API's port, and give the drain its time before the kill", () => {
    const c = container(api);
    expect(c.ports?.find((p) => p.name === 'http')?.containerPort).toBe(IMAGE_PORT);
    expect(c.startupProbe?.httpGet).toEqual({ path: '/health/live', port: 'http' });
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/health/live', port: 'http' });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    // Slow migrations at start-up: at least five minutes before liveness counts.
    expect(c.startupProbe!.periodSeconds! * c.startupProbe!.failureThreshold!).toBeGreaterThanOrEqual(300);
    const drainAndClose = (setting('SHUTDOWN_DRAIN_MS') + setting('SHUTDOWN_TIMEOUT_MS')) / 1000;
    expect(drainAndClose).toBe(15);
    expect(podSpec(api).terminationGracePeriodSeconds).toBeGreaterThan(drainAndClose);
    expect(podSpec(worker).terminationGracePeriodSeconds).toBeGreaterThan(
      setting('SHUTDOWN_TIMEOUT_MS') / 1000,
    );
    // The worker has no HTTP port: its liveness asks the metrics listener, from inside the pod.
    expect(portNames(worker)).toEqual(['metrics']);
    expect(container(worker).livenessProbe?.exec?.command?.join(' ')).toContain(
      "process.env.METRICS_PORT+'/metrics'",
    );
  });

  it('run the API without jobs, the worker with them and the migrations, all behind the image entrypoint', () => {
    expect(envValue(api, 'WORKERS')).toBe('off');
    expect(envValue(worker, 'WORKERS')).toBe('on');
    // Kubernetes' `command` would replace the entrypoint, tini; compose's `command` is Kubernetes' `args`.
    for (const t of templates)
      for (const c of t.template.spec!.containers) expect(c.command, c.name).toBeUndefined();
    expect(container(api).args).toBeUndefined();
    expect(container(worker).args).toEqual(COMPOSE_WORKER_COMMAND);
    expect(container(migrate).args).toEqual(['node', 'dist/apps/cli/src/main.js', 'db:migrate']);
    expect(readFileSync(`${ROOT}apps/cli/src/cli.ts`, 'utf8')).toContain(".command('db:migrate')");
    expect(migrate.spec).toMatchObject({
      backoffLimit: expect.any(Number),
      ttlSecondsAfterFinished: expect.any(Number),
    });
    expect(podSpec(migrate).restartPolicy).toBe('Never');
  });

  it("run every pod as the image's user, on a read-only root filesystem with /tmp apart, without any privilege", () => {
    for (const { owner, template } of templates) {
      const spec = template.spec!;
      expect(spec.securityContext, owner.metadata.name).toMatchObject({
        runAsNonRoot: true,
        runAsUser: IMAGE_UID,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(spec.automountServiceAccountToken).toBe(false);
      for (const c of spec.containers) {
        expect(c.securityContext, c.name).toMatchObject({
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        });
        const tmp = c.volumeMounts?.find((v) => v.mountPath === '/tmp');
        expect(spec.volumes?.find((v) => v.name === tmp?.name)?.emptyDir, c.name).toBeDefined();
        expect(c.resources?.requests?.memory && c.resources?.limits?.memory, c.name).toBeTruthy();
      }
    }
  });

  it('scale the API on CPU, spread across nodes, one replica disrupted at a time', () => {
    const [hpa] = ofKind(manifests, 'HorizontalPodAutoscaler');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.metrics).toEqual([
      {
        type: 'Resource',
        resource: { name: 'cpu', target: expect.objectContaining({ type: 'Utilization' }) },
      },
    ]);
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    // The autoscaler owns the count: a `replicas` here would be set back at every apply.
    expect(api.spec.replicas).toBeUndefined();
    const spread = podSpec(api).topologySpreadConstraints ?? [];
    const byNode = spread.find((s) => s.topologyKey === 'kubernetes.io/hostname');
    expect(byNode).toMatchObject({ maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' });
    expect(selected(byNode?.labelSelector)).toEqual(['governance-api']);
    expect(api.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(ofKind(manifests, 'PodDisruptionBudget')[0].spec.maxUnavailable).toBe(1);
  });

  it('serve the metrics on METRICS_PORT, scraped with METRICS_TOKEN as governance-* jobs, reached by Prometheus only', () => {
    for (const m of [api, worker]) {
      expect(container(m).ports?.find((p) => p.name === 'metrics')?.containerPort).toBe(
        Number(configMap.data.METRICS_PORT),
      );
    }
    expect(configMap.data.METRICS_HOST).toBe('0.0.0.0');
    expect(Object.keys(secret.stringData)).toContain('METRICS_TOKEN');
    const monitors = [...ofKind(manifests, 'ServiceMonitor'), ...ofKind(manifests, 'PodMonitor')];
    for (const e of monitors.flatMap((m) => m.spec.endpoints ?? m.spec.podMetricsEndpoints)) {
      expect(e).toMatchObject({ port: 'metrics', path: '/metrics' });
      expect(e.authorization).toEqual({
        type: 'Bearer',
        credentials: { name: secret.metadata.name, key: 'METRICS_TOKEN' },
      });
    }
    // A ServiceMonitor's job is its Service's name; the PodMonitor names its own.
    expect(named('Service', 'governance-api').metadata.name).toMatch(/^governance-/);
    expect(named('PodMonitor', 'governance-worker').spec.podMetricsEndpoints[0].relabelings).toContainEqual(
      expect.objectContaining({ targetLabel: 'job', replacement: 'governance-worker' }),
    );
    for (const policy of ofKind(manifests, 'NetworkPolicy')) {
      expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
      for (const rule of policy.spec.ingress ?? []) {
        // Never open to all: every rule names its peers, by namespace (and pods), never by address.
        expect(rule.from?.length, policy.metadata.name).toBeGreaterThan(0);
        for (const peer of rule.from)
          expect(peer.namespaceSelector?.matchLabels, policy.metadata.name).toBeDefined();
        const metrics = rule.ports.some((p: { port: string }) => p.port === 'metrics');
        if (metrics)
          expect(rule.from[0].podSelector?.matchLabels).toEqual({ 'app.kubernetes.io/name': 'prometheus' });
      }
      const egressPorts = policy.spec.egress.flatMap((r: { ports?: { port: number }[] }) =>
        (r.ports ?? []).map((p) => p.port),
      );
      expect(egressPorts, policy.metadata.name).toEqual(expect.arrayContaining([53, 5432]));
    }
  });
});

describe('docker-compose.yml', () => {
  const { services } = readCompose();
  const appServices = Object.entries(services).filter(([, s]) => s.image === services.worker.image);
  const apiServices = appServices.filter(([, s]) => s.environment?.WORKERS === 'off');

  it('runs two API replicas and a worker from one image, behind HAProxy, which alone publishes a port', () => {
    expect(apiServices.reduce((n, [, s]) => n + (s.deploy?.replicas ?? 1), 0)).toBe(2);
    expect(services.worker.environment?.WORKERS).toBe('on');
    expect(services.worker.command).toEqual(['node', 'dist/apps/worker/src/main.js']);
    expect(COMPOSE_WORKER_COMMAND).toEqual(services.worker.command);
    const [, major, minor] = /^haproxy:(\d+)\.(\d+)/.exec(services.haproxy.image ?? '') ?? [];
    expect(Number(major) * 100 + Number(minor)).toBeGreaterThanOrEqual(206);
    expect(services.haproxy.ports).toEqual(['${API_PUBLISH:-127.0.0.1:3000}:3000']);
    expect(services.haproxy.volumes).toContain(
      './deploy/haproxy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro',
    );
    expect(
      Object.entries(services)
        .filter(([, s]) => s.ports)
        .map(([name]) => name),
    ).toEqual(['haproxy']);
    // HAProxy's servers are the API services, by their names on the compose network.
    const servers = [...HAPROXY_TEXT.matchAll(/^ {2}server (\S+) (\S+):3000$/gm)].map((m) => [m[1], m[2]]);
    expect(servers).toEqual(apiServices.map(([name]) => [name, name]));
  });

  it('runs the application read-only with /tmp apart, trusts HAProxy as one hop, and gives the drain its time', () => {
    const drainAndClose =
      (documentedDefault('SHUTDOWN_DRAIN_MS') + documentedDefault('SHUTDOWN_TIMEOUT_MS')) / 1000;
    for (const [name, s] of appServices) {
      expect(s.read_only, name).toBe(true);
      expect(
        s.tmpfs?.some((t) => t.startsWith('/tmp')),
        name,
      ).toBe(true);
      expect(composeSeconds(s.stop_grace_period ?? '10s'), name).toBeGreaterThan(drainAndClose);
      expect(s.environment?.TRUST_PROXY, name).toBe('${TRUST_PROXY:-1}');
    }
  });

  it('names only variables the service reads (PostgreSQL its own)', () => {
    for (const [name, s] of Object.entries(services)) {
      const variables = Object.keys(s.environment ?? {});
      if (name === 'postgres')
        expect(
          variables.every((v) => v.startsWith('POSTGRES_')),
          variables.join(),
        ).toBe(true);
      else if (appServices.some(([app]) => app === name)) {
        for (const v of variables) expect(isServiceVariable(v), `${name}: ${v}`).toBe(true);
      } else expect(variables, name).toEqual([]);
    }
  });
});

describe('deploy/haproxy/haproxy.cfg', () => {
  it('passes haproxy -c, with no warning but the Docker names this machine cannot resolve', (ctx) => {
    const haproxy = haproxyBinary((note) => ctx.skip(note));
    const run = spawnSync(haproxy, ['-c', '-f', HAPROXY_CFG], { encoding: 'utf8' });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const warnings = (run.stdout + run.stderr).split('\n').filter((l) => l.includes('[WARNING]'));
    expect(warnings.filter((w) => !/could not resolve address 'api-\d'/.test(w))).toEqual([]);
  });

  it('checks GET /health/ready, balances round robin, keeps connections, and waits long on tunnels only', () => {
    const lines = HAPROXY_TEXT.split('\n').map((l) => l.trim());
    for (const line of [
      'option httpchk GET /health/ready',
      'http-check expect status 200',
      'balance roundrobin',
      'http-reuse safe',
      'option forwardfor',
      'retry-on conn-failure empty-response',
      'http-request disable-l7-retry unless METH_GET || METH_HEAD || METH_OPTIONS',
      'nameserver dns 127.0.0.11:53',
      'timeout tunnel 1h',
    ]) {
      expect(lines).toContain(line);
    }
  });

  describe('in front of two stand-in replicas', () => {
    const replicas: Replica[] = [];
    let haproxy: ReturnType<typeof startHaproxy> | undefined;
    let port = 0;
    afterAll(async () => {
      haproxy?.stop();
      await Promise.all(replicas.map(stopReplica));
    });

    it('routes, forwards, retries and drains as the comments say', { timeout: 30_000 }, async (ctx) => {
      haproxyBinary((note) => ctx.skip(note));
      replicas.push(await startReplica('api-1'), await startReplica('api-2'));
      port = await freePort();
      haproxy = startHaproxy(localConfig(HAPROXY_TEXT, port, replicas));
      const log = haproxy.log;
      await eventually(async () => (await answeredBy(port)) !== null, 10_000);

      // Round robin, and the client's address appended to what the client sent (TRUST_PROXY=1 reads the last).
      const names: (string | null)[] = [];
      for (let i = 0; i < 4; i++) names.push(await answeredBy(port));
      expect(new Set(names)).toEqual(new Set(['api-1', 'api-2']));
      const forwarded = JSON.parse(
        (await send(port, '/who', { headers: { 'x-forwarded-for': '203.0.113.9' } })).body,
      );
      expect(forwarded.forwardedFor.split(/,\s*/)).toEqual(['203.0.113.9', '127.0.0.1']);

      // /metrics is never answered through the balancer.
      expect((await send(port, '/metrics')).status).toBe(404);
      expect(replicas.some((r) => r.hits.has('GET /metrics'))).toBe(false);

      // A connection closed without an answer: a POST is not sent again (502), a GET is, to the other replica.
      expect((await send(port, '/close', { method: 'POST' })).status).toBe(502);
      expect(replicas.reduce((n, r) => n + (r.hits.get('POST /close') ?? 0), 0)).toBe(1);
      expect((await send(port, '/close')).status).toBe(502);
      expect(replicas.map((r) => r.hits.get('GET /close') ?? 0).every((n) => n >= 1)).toBe(true);

      // A replica that turns /health/ready to 503 (SIGTERM) is out of rotation within the drain (SHUTDOWN_DRAIN_MS).
      const started = Date.now();
      replicas[1].ready = false;
      await eventually(async () => {
        for (let i = 0; i < 4; i++) if ((await answeredBy(port)) !== 'api-1') return false;
        return true;
      }, 10_000);
      expect(Date.now() - started).toBeLessThan(documentedDefault('SHUTDOWN_DRAIN_MS'));

      // Back in, then gone at once (a refused connection): POSTs are sent to the other replica, none lost.
      replicas[1].ready = true;
      await eventually(
        async () => (await answeredBy(port)) === 'api-2' || (await answeredBy(port)) === 'api-2',
        10_000,
      );
      await stopReplica(replicas[1]);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await send(port, '/who', { method: 'POST' })).status);
      expect(statuses).toEqual([200, 200, 200, 200]);
      // HAProxy's log shows the retry: `+1` redispatched retry, on api-1.
      await eventually(
        async () => /api\/api-1 .* \d+\/\d+\/\d+\/\d+\/\+1 \d+\/\d+ "POST \/who/.test(log()),
        2000,
      );
    });
  });
});
