import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PodMonitor, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import type { IPodTemplateSpec } from 'kubernetes-models/v1/PodTemplateSpec';
import { parse, parseAllDocuments } from 'yaml';
import { ENV_REFERENCE } from '../../libs/platform/src/config/env-reference.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const KUBERNETES_DIR = `${ROOT}deploy/kubernetes/`;
export const HAPROXY_CFG = `${ROOT}deploy/haproxy/haproxy.cfg`;

/**
 * Every kind the manifests may hold, by `apiVersion/kind`, with its model: `validate()` checks an object against the
 * OpenAPI schema of a current Kubernetes (kubernetes-models) or of the Prometheus Operator's CRDs, and throws. The
 * schemas check types, required fields, enums and formats, not unknown fields: a misspelt field passes them, which
 * is why the checks of the spec read the fields that matter by name.
 */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
};

/** A manifest as read: plain data, typed loosely; the spec narrows what it reads. */
export type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Labels };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads each kind's fields as it likes
  [k: string]: any;
};
export type Labels = Record<string, string>;

/** Validates one object against the schema of its kind; an unknown kind is refused. */
export function validateManifest(object: { apiVersion?: unknown; kind?: unknown }): void {
  const model = MODELS[`${String(object.apiVersion)}/${String(object.kind)}`];
  if (!model) throw new Error(`unknown kind ${String(object.apiVersion)}/${String(object.kind)}`);
  new model(object as never).validate();
}

/**
 * The manifest files (kustomization.yaml apart) and every YAML document in them. Read as YAML 1.1, as Kubernetes
 * reads them: an unquoted `on` or `off` is a boolean there, and the schema then refuses it where a string belongs.
 */
export function readManifests(): { files: string[]; manifests: (Manifest & { file: string })[] } {
  const files = readdirSync(KUBERNETES_DIR)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort();
  const manifests = files.flatMap((file) =>
    parseAllDocuments(readFileSync(KUBERNETES_DIR + file, 'utf8'), { version: '1.1' }).map((doc) => {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return { ...(doc.toJS() as Manifest), file };
    }),
  );
  return { files, manifests };
}

export function readKustomization(): { resources: string[]; namespace: string; images: { name: string }[] } {
  return parse(readFileSync(`${KUBERNETES_DIR}kustomization.yaml`, 'utf8'), { version: '1.1' });
}

export interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  read_only?: boolean;
  tmpfs?: string[];
  stop_grace_period?: string;
  deploy?: { replicas?: number };
}

/** docker-compose.yml, its `<<` merges resolved (Compose reads YAML 1.2 with merge keys). */
export function readCompose(): { services: Record<string, ComposeService> } {
  return parse(readFileSync(`${ROOT}docker-compose.yml`, 'utf8'), { merge: true });
}

/** The objects of one kind. */
export function ofKind(manifests: Manifest[], kind: string): Manifest[] {
  return manifests.filter((m) => m.kind === kind);
}

/** Whether a label selector (`matchLabels`, or a Service's plain map) selects these labels. */
export function selects(
  selector: Labels | { matchLabels?: Labels } | undefined,
  labels: Labels = {},
): boolean {
  const match = (selector && 'matchLabels' in selector ? selector.matchLabels : selector) as
    Labels | undefined;
  if (!match || !Object.keys(match).length) return false;
  return Object.entries(match).every(([k, v]) => labels[k] === v);
}

/** The pod templates of the workloads: the Deployments' and the Job's. */
export function podTemplates(manifests: Manifest[]): { owner: Manifest; template: IPodTemplateSpec }[] {
  return manifests
    .filter((m) => m.kind === 'Deployment' || m.kind === 'Job')
    .map((owner) => ({ owner, template: owner.spec.template as IPodTemplateSpec }));
}

/**
 * The variables the service reads (ENV_REFERENCE), and the one read by a library instead: node-postgres takes the
 * database password from PGPASSWORD, which keeps it out of DATABASE_URL.
 */
export function isServiceVariable(name: string): boolean {
  return Object.hasOwn(ENV_REFERENCE, name) || name === 'PGPASSWORD';
}

/** A variable's default, as ENV_REFERENCE documents it (`5000` in backquotes). */
export function documentedDefault(name: string): number {
  const doc = (ENV_REFERENCE as Record<string, { default: string } | undefined>)[name];
  const value = Number(/^`(\d+)`$/.exec(doc?.default ?? '')?.[1]);
  if (!Number.isFinite(value)) throw new Error(`${name} has no documented numeric default`);
  return value;
}

/** Compose's durations as used in the file (`30s`, `1m30s`), in seconds. */
export function composeSeconds(duration: string): number {
  const m = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration);
  if (!m || (!m[1] && !m[2])) throw new Error(`unreadable duration ${duration}`);
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0);
}
