import pg from 'pg';
import { newId } from '#platform';
import { hashPassword } from '../../libs/identity/src/auth/password.js';
import type { Cluster } from '../../tools/cluster/cluster.mjs';

/** An answer as the cluster suite reads it: status, JSON body, and which replica HAProxy sent it to. */
export interface Reply {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads the envelope's fields as it likes
  body: any;
  /** `api-N` when the request went through the proxy (its X-Served-By header); null when sent to a replica directly. */
  servedBy: string | null;
}

export interface CallOptions {
  token?: string;
  apiKey?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One HTTP request to `base` (the proxy, or a replica's own URL). */
export async function call(
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body, servedBy: res.headers.get('x-served-by') };
}

export const TEST_PASSWORD = 'Cluster-pass-123';
let counter = 0;
export const uniqueEmail = (prefix: string) =>
  `${prefix}-${process.pid}-${Date.now()}-${(counter += 1)}@example.com`;

export interface Owner {
  token: string;
  userId: string;
  orgId: string;
  email: string;
  organizationName: string;
}

/** Registers a user with a new organization, through `base`. */
export async function register(base: string, organizationName: string): Promise<Owner> {
  const email = uniqueEmail('owner');
  const res = await call(base, 'POST', '/api/v1/auth/register', {
    body: { name: 'Owner', email, password: TEST_PASSWORD, organizationName },
  });
  if (res.status !== 201) throw new Error(`register: ${res.status} ${JSON.stringify(res.body)}`);
  const { data } = res.body;
  return { token: data.token, userId: data.user.id, orgId: data.organization.id, email, organizationName };
}

/** Signs `email` in through `base`: a new session's token. */
export async function login(base: string, email: string): Promise<string> {
  const res = await call(base, 'POST', '/api/v1/auth/login', { body: { email, password: TEST_PASSWORD } });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.token;
}

/** An agent of the owner's organization: its id and key. */
export async function createAgent(
  base: string,
  token: string,
  name = 'Agent',
): Promise<{ id: string; key: string }> {
  const res = await call(base, 'POST', '/api/v1/agents', { token, body: { name } });
  if (res.status !== 201) throw new Error(`agent: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.id, key: res.body.data.apiKey };
}

/** A trace body; `flagged` ones match no policy of their own, so a test adds the policy it wants. */
export function traceBody(i: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    inputContext: { prompt: `Question ${i}` },
    outputDecision: { action: 'answer', text: `Answer ${i}` },
    metadata: { n: i },
    ...extra,
  };
}

/** The cluster's database, for what only SQL shows (the chain's rows, the migrations' table). */
export function databaseOf(cluster: Cluster): pg.Pool {
  return new pg.Pool({ connectionString: cluster.database.url, max: 2 });
}

/**
 * A member of `role` added to the organization with SQL (the invitation's e-mail round trip is tested elsewhere),
 * signed in through the proxy.
 */
export async function addMember(
  cluster: Cluster,
  db: pg.Pool,
  orgId: string,
  role: 'admin' | 'member' | 'viewer',
): Promise<{ userId: string; email: string; token: string }> {
  const email = uniqueEmail(role);
  const userId = newId();
  const now = new Date();
  await db.query(
    `insert into users (id, email, name, password_hash, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)`,
    [userId, email, `${role} user`, await hashPassword(TEST_PASSWORD), now],
  );
  await db.query(
    `insert into memberships (id, organization_id, user_id, role, is_active, created_at, updated_at)
     values ($1, $2, $3, $4, true, $5, $5)`,
    [newId(), orgId, userId, role, now],
  );
  return { userId, email, token: await login(cluster.base, email) };
}

/** Calls `path` once on every replica directly (not through the proxy): each one's status. */
export async function onEveryReplica(
  cluster: Cluster,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<number[]> {
  const statuses: number[] = [];
  for (const replica of cluster.replicas)
    statuses.push((await call(replica.base!, method, path, options)).status);
  return statuses;
}

/**
 * `count` requests through the proxy, one after another: their statuses and the replicas that answered (round-robin
 * spreads consecutive requests over every replica in service).
 */
export async function throughProxy(
  cluster: Cluster,
  count: number,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<{ statuses: number[]; servedBy: Set<string> }> {
  const statuses: number[] = [];
  const servedBy = new Set<string>();
  for (let i = 0; i < count; i++) {
    const res = await call(cluster.base, method, path, options);
    statuses.push(res.status);
    if (res.servedBy) servedBy.add(res.servedBy);
  }
  return { statuses, servedBy };
}

/** A metric's summed value over every series of `name` whose labels include `labels`, in Prometheus text. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
