import { Buffer } from 'node:buffer';
import { verify } from 'node:crypto';
import { canonicalJson } from './canonical-json.mjs';

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The bytes a checkpoint's signature covers: the RFC 8785 canonical JSON of its five signed fields, UTF-8. */
export function checkpointSigningInput(checkpoint) {
  const { organizationId, sequence, hash, createdAt, keyId } = checkpoint;
  return Buffer.from(canonicalJson({ organizationId, sequence, hash, createdAt, keyId }), 'utf8');
}

/** Whether a value has the shape of a checkpoint (`{id, organizationId, sequence, hash, createdAt, keyId, signature}`). */
export function isCheckpoint(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    typeof value.organizationId === 'string' &&
    Number.isSafeInteger(value.sequence) &&
    value.sequence >= 1 &&
    typeof value.hash === 'string' &&
    typeof value.createdAt === 'string' &&
    typeof value.keyId === 'string' &&
    typeof value.signature === 'string'
  );
}

/** A list item: a checkpoint, a webhook body `{type: 'audit.checkpoint', data}` (its checkpoint), or another event. */
function unwrap(item, where) {
  if (item && typeof item === 'object' && typeof item.type === 'string' && 'data' in item) {
    if (item.type !== 'audit.checkpoint') return null; // another webhook event: ignored
    item = item.data;
  }
  if (!isCheckpoint(item)) {
    throw new Error(
      `${where} is not a checkpoint {id, organizationId, sequence, hash, createdAt, keyId, signature}`,
    );
  }
  return item;
}

/**
 * The checkpoints a file holds: the API envelope `{success, data: [...]}`, a bare JSON array, `{checkpoints: [...]}`,
 * a single checkpoint or webhook body, or NDJSON where each line is a checkpoint or a webhook body
 * `{type: 'audit.checkpoint', data: {...}}` (lines of other event types are ignored, blank lines too).
 *
 * @param {string} text
 * @returns {Record<string, unknown>[]}
 */
export function parseCheckpointsText(text) {
  const body = text.replace(/^\uFEFF/, '');
  let parsed;
  let whole = true;
  try {
    parsed = JSON.parse(body);
  } catch {
    whole = false;
  }
  if (whole) {
    if (parsed?.success === false)
      throw new Error(`the file holds an API error: ${JSON.stringify(parsed.error ?? parsed)}`);
    const list = Array.isArray(parsed)
      ? parsed
      : Array.isArray(parsed?.data)
        ? parsed.data
        : Array.isArray(parsed?.checkpoints)
          ? parsed.checkpoints
          : parsed && typeof parsed === 'object' && !('type' in parsed) && isCheckpoint(parsed?.data)
            ? [parsed.data]
            : parsed && typeof parsed === 'object'
              ? [parsed]
              : null;
    if (!list) throw new Error('expected a JSON object, an array or NDJSON of checkpoints');
    return list.map((item, index) => unwrap(item, `item ${index + 1}`)).filter((item) => item !== null);
  }
  const checkpoints = [];
  body.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    let item;
    try {
      item = JSON.parse(line);
    } catch {
      throw new Error(`line ${index + 1} is not JSON`);
    }
    const checkpoint = unwrap(item, `line ${index + 1}`);
    if (checkpoint) checkpoints.push(checkpoint);
  });
  return checkpoints;
}

/**
 * Verifies a checkpoint's Ed25519 signature with the key its keyId names.
 *
 * @param {Record<string, unknown>} checkpoint
 * @param {{get(keyId: string): import('node:crypto').KeyObject | undefined}} keyring
 * @returns {'valid' | 'bad_signature' | 'unknown_key'}
 */
export function verifyCheckpointSignature(checkpoint, keyring) {
  const publicKey = keyring.get(checkpoint.keyId);
  if (!publicKey) return 'unknown_key';
  const signature = checkpoint.signature;
  // base64url without padding, canonical (decoding then encoding gives it back), 64 bytes.
  if (typeof signature !== 'string' || !BASE64URL.test(signature)) return 'bad_signature';
  const bytes = Buffer.from(signature, 'base64url');
  if (bytes.length !== 64 || bytes.toString('base64url') !== signature) return 'bad_signature';
  try {
    return verify(null, checkpointSigningInput(checkpoint), publicKey, bytes) ? 'valid' : 'bad_signature';
  } catch {
    return 'bad_signature';
  }
}
