import { createHash } from 'node:crypto';
import { type Role, scimError } from '#platform';
import { SCHEMA, SCIM_DEFAULT_COUNT, SCIM_MAX_RESULTS } from './scim-discovery.js';
import { ScimFilterError } from './scim-filter/index.js';
import type { ScimUserRecord } from './scim-users.repository.js';

/** The four role buckets (docs/identity-administrators.md, "SCIM provisioning"); `reviewer` is the viewer role. */
export const BUCKETS = ['owner', 'admin', 'member', 'reviewer'] as const;
export type Bucket = (typeof BUCKETS)[number];

export const bucketOf = (role: Role): Bucket => (role === 'viewer' ? 'reviewer' : role);
export const roleOf = (bucket: Bucket): Role => (bucket === 'reviewer' ? 'viewer' : bucket);
export const isBucket = (value: unknown): value is Bucket =>
  typeof value === 'string' && (BUCKETS as readonly string[]).includes(value.toLowerCase());

/** A weak version tag that changes whenever what the resource shows does (a digest of its attributes). */
export const versionOf = (attributes: Record<string, unknown>): string =>
  `W/"${createHash('sha256').update(JSON.stringify(attributes)).digest('base64url').slice(0, 16)}"`;

/** The RFC 7643 User of a member. */
export function toScimUser(r: ScimUserRecord, base: string): Record<string, unknown> {
  const bucket = bucketOf(r.role);
  const formatted = [r.givenName, r.familyName].filter(Boolean).join(' ');
  const attributes = {
    schemas: [SCHEMA.user],
    id: r.userId,
    ...(r.externalId ? { externalId: r.externalId } : {}),
    userName: r.email,
    name: {
      ...(r.givenName ? { givenName: r.givenName } : {}),
      ...(r.familyName ? { familyName: r.familyName } : {}),
      formatted: formatted || r.name,
    },
    displayName: r.displayName ?? (formatted || r.name),
    active: r.active,
    // What the IdP wrote, exactly, so that it sees no drift; until it writes some, the userName as the work address.
    emails: r.emails ?? [{ value: r.email, type: 'work', primary: true }],
    groups: [{ value: bucket, display: bucket, $ref: `${base}/Groups/${bucket}` }],
  };
  return {
    ...attributes,
    meta: {
      resourceType: 'User',
      created: r.createdAt.toISOString(),
      lastModified: r.updatedAt.toISOString(),
      location: `${base}/Users/${r.userId}`,
      version: versionOf(attributes),
    },
  };
}

/** Attribute paths of `attributes` / `excludedAttributes`: comma-separated, URN prefix dropped, lower-case. */
function paths(list: string): string[][] {
  return list
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .slice(0, 50)
    .map((p) => {
      const urn = /^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i.exec(p);
      return (urn ? p.slice(urn[0].length) : p).toLowerCase().split('.').slice(0, 2);
    });
}

const ALWAYS = new Set(['id', 'schemas']);

/**
 * RFC 7644 §3.9: with `attributes`, only those (and `id`, `schemas`, always returned); with `excludedAttributes`,
 * all but those. Names are case-insensitive; a sub-attribute (`name.givenName`, `meta.lastModified`) keeps or drops
 * that part of its parent.
 */
export function project(
  resource: Record<string, unknown>,
  attributes: string | undefined,
  excluded: string | undefined,
): Record<string, unknown> {
  if (attributes !== undefined && attributes.trim() !== '') {
    const wanted = paths(attributes);
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(resource)) {
      const k = key.toLowerCase();
      if (ALWAYS.has(k)) {
        out[key] = value;
        continue;
      }
      const subs = wanted.filter((p) => p[0] === k);
      if (subs.length === 0) continue;
      if (subs.some((p) => p.length === 1) || value === null || typeof value !== 'object') {
        out[key] = value;
        continue;
      }
      const keep = new Set(subs.map((p) => p[1]));
      const pick = (o: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(o).filter(([sub]) => keep.has(sub.toLowerCase())));
      out[key] = Array.isArray(value)
        ? value.map((v) => (v && typeof v === 'object' ? pick(v as Record<string, unknown>) : v))
        : pick(value as Record<string, unknown>);
    }
    return out;
  }
  if (excluded !== undefined && excluded.trim() !== '') {
    const dropped = paths(excluded);
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(resource)) {
      const k = key.toLowerCase();
      if (!ALWAYS.has(k) && dropped.some((p) => p[0] === k && p.length === 1)) continue;
      const subs = new Set(dropped.filter((p) => p[0] === k && p.length === 2).map((p) => p[1]));
      if (subs.size === 0 || value === null || typeof value !== 'object') {
        out[key] = value;
        continue;
      }
      const omit = (o: Record<string, unknown>) =>
        Object.fromEntries(Object.entries(o).filter(([sub]) => !subs.has(sub.toLowerCase())));
      out[key] = Array.isArray(value)
        ? value.map((v) => (v && typeof v === 'object' ? omit(v as Record<string, unknown>) : v))
        : omit(value as Record<string, unknown>);
    }
    return out;
  }
  return resource;
}

/** Runs filter work (parsing, compiling, matching), a ScimFilterError becoming 400 invalidFilter. */
export function filterWork<T>(work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (err instanceof ScimFilterError) throw scimError(400, 'invalidFilter', err.message);
    throw err;
  }
}

/** A query parameter given at most once, as text (a repeated one is ambiguous: 400 invalidValue). */
export function queryText(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw scimError(400, 'invalidValue', `${name} must be given once`);
  return value;
}

/**
 * A list request's `startIndex` (1-based, default 1), `count` (default SCIM_DEFAULT_COUNT, clamped to
 * 0..SCIM_MAX_RESULTS) and `filter` (undefined when absent or blank).
 */
export function listRequestOf(query: Record<string, unknown>): {
  startIndex: number;
  count: number;
  filter: string | undefined;
} {
  const int = (raw: unknown, name: string): number | undefined => {
    const value = queryText(raw, name);
    if (value === undefined || value === '') return undefined;
    if (!/^-?\d{1,9}$/.test(value)) {
      throw scimError(400, 'invalidValue', `${name} must be an integer`);
    }
    return Number(value);
  };
  const startIndex = Math.max(1, int(query.startIndex, 'startIndex') ?? 1);
  const count = Math.min(SCIM_MAX_RESULTS, Math.max(0, int(query.count, 'count') ?? SCIM_DEFAULT_COUNT));
  const filter = queryText(query.filter, 'filter');
  return { startIndex, count, filter: filter !== undefined && filter.trim() !== '' ? filter : undefined };
}
