import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.mjs';

/** The prevHash of an organization's first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** The fields of an entry that its hash covers: all but id, prevHash and hash. */
export const HASHED_FIELDS = Object.freeze([
  'actor',
  'createdAt',
  'eventType',
  'ip',
  'metadata',
  'organizationId',
  'sequence',
  'targetId',
  'targetType',
  'userAgent',
  'userId',
]);

/**
 * The hashed content of an exported entry: the entry without id, prevHash and hash. createdAt is hashed as the
 * ISO-8601 string the export carries (a Date is turned into that string).
 *
 * @param {Record<string, unknown>} entry
 * @returns {Record<string, unknown>}
 */
export function hashedContent(entry) {
  const content = {};
  for (const field of HASHED_FIELDS) content[field] = entry[field];
  if (content.createdAt instanceof Date) content.createdAt = content.createdAt.toISOString();
  return content;
}

/**
 * hash = hex(SHA-256(UTF-8 of prevHash + "\n" + RFC 8785 canonical JSON of the hashed content)).
 *
 * @param {string} prevHash
 * @param {Record<string, unknown>} entry
 * @returns {string}
 */
export function entryHash(prevHash, entry) {
  const canonical = canonicalJson(hashedContent(entry));
  return createHash('sha256').update(`${prevHash}\n${canonical}`, 'utf8').digest('hex');
}
