import { hash } from 'node:crypto';
import { canonicalJson } from '../crypto/canonical-json.js';
import type { AuditEntryRow } from './audit.schema.js';

export const GENESIS_HASH = '0'.repeat(64);

/**
 * The hashed content of an entry: every field except id, prevHash and hash (docs/compliance-officers.md, "Audit log";
 * audit-hash.spec.ts).
 */
export function hashedContent(
  entry: Omit<AuditEntryRow, 'id' | 'prevHash' | 'hash'>,
): Record<string, unknown> {
  return {
    sequence: entry.sequence,
    organizationId: entry.organizationId,
    eventType: entry.eventType,
    userId: entry.userId,
    actor: entry.actor,
    targetType: entry.targetType,
    targetId: entry.targetId,
    metadata: entry.metadata,
    ip: entry.ip,
    userAgent: entry.userAgent,
    createdAt: entry.createdAt.toISOString(),
  };
}

/** hash = SHA-256(prevHash + "\n" + RFC 8785 canonical JSON of the hashed content), hex. */
export function chainHash(prevHash: string, entry: Omit<AuditEntryRow, 'id' | 'prevHash' | 'hash'>): string {
  const canonical = canonicalJson(hashedContent(entry));
  return hash('sha256', `${prevHash}\n${canonical}`, 'hex');
}

/**
 * Metadata as PostgreSQL's jsonb will return it: undefined dropped, strings well-formed and free of NUL
 * (jsonb refuses \u0000), so the hash computed at append equals the one recomputed at verification.
 */
export function normaliseMetadata(metadata: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!metadata) return {};
  const plain = JSON.parse(JSON.stringify(metadata)) as unknown;
  return cleanValue(plain) as Record<string, unknown>;
}

/** Text as jsonb and text columns store it: well-formed UTF-16 (lone surrogates replaced) without NUL. */
export function cleanText(value: string): string {
  return value.toWellFormed().replaceAll('\u0000', '');
}

function cleanValue(value: unknown): unknown {
  if (typeof value === 'string') return cleanText(value);
  if (Array.isArray(value)) return value.map(cleanValue);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [cleanText(k), cleanValue(v)]));
  }
  return value;
}
