import { createHash, createPublicKey } from 'node:crypto';

const PEM_BLOCK = /-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----/g;

/**
 * RFC 7638 JWK thumbprint of an Ed25519 public key: base64url (no padding) of the SHA-256 of the UTF-8 string
 * `{"crv":"Ed25519","kty":"OKP","x":"<x>"}`, x being the base64url raw 32-byte public key.
 *
 * @param {string} x
 * @returns {string}
 */
export function jwkThumbprint(x) {
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`, 'utf8').digest('base64url');
}

/** The base64url `x` of an Ed25519 public KeyObject, or an error. */
function ed25519X(keyObject) {
  if (keyObject.asymmetricKeyType !== 'ed25519') {
    throw new Error(`not an Ed25519 key (${keyObject.asymmetricKeyType ?? keyObject.type})`);
  }
  return keyObject.export({ format: 'jwk' }).x;
}

/**
 * Builds a verification key from one published key (`{keyId, algorithm, publicKeyPem, jwk, createdAt}`). The key
 * is taken from its JWK, or from its PEM when it has no JWK; when it has both they must be the same key. Its
 * thumbprint is recomputed: a key whose keyId is not its thumbprint is refused (`status: 'thumbprint_mismatch'`),
 * as is a key that cannot be read or is not Ed25519 (`status: 'invalid'`).
 *
 * @param {Record<string, unknown>} published
 * @param {string} source where the key came from (for the report)
 * @returns {{keyId: string | null, thumbprint: string | null, status: 'ok' | 'thumbprint_mismatch' | 'invalid',
 *   detail?: string, source: string, createdAt: string | null, publicKey?: import('node:crypto').KeyObject}}
 */
export function loadPublishedKey(published, source) {
  const claimed = typeof published?.keyId === 'string' ? published.keyId : null;
  const createdAt = typeof published?.createdAt === 'string' ? published.createdAt : null;
  const refuse = (status, detail, thumbprint = null) => ({
    keyId: claimed,
    thumbprint,
    status,
    detail,
    source,
    createdAt,
  });
  if (!published || typeof published !== 'object') return refuse('invalid', 'not a key object');
  if (published.algorithm !== undefined && published.algorithm !== 'Ed25519') {
    return refuse('invalid', `algorithm ${JSON.stringify(published.algorithm)} is not Ed25519`);
  }
  const jwk = published.jwk ?? (published.kty !== undefined ? published : undefined);
  const pem = typeof published.publicKeyPem === 'string' ? published.publicKeyPem : undefined;
  if (jwk === undefined && pem === undefined) return refuse('invalid', 'neither jwk nor publicKeyPem');
  let publicKey;
  let x;
  try {
    if (jwk !== undefined) {
      if (
        !jwk ||
        typeof jwk !== 'object' ||
        jwk.kty !== 'OKP' ||
        jwk.crv !== 'Ed25519' ||
        typeof jwk.x !== 'string'
      ) {
        return refuse('invalid', 'jwk is not an OKP Ed25519 public key');
      }
      publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
      x = ed25519X(publicKey);
      if (x !== jwk.x) return refuse('invalid', 'jwk x is not a canonical base64url 32-byte key');
      if (pem !== undefined && ed25519X(createPublicKey(pem)) !== x) {
        return refuse('invalid', 'publicKeyPem and jwk are different keys');
      }
    } else {
      publicKey = createPublicKey(pem);
      x = ed25519X(publicKey);
    }
  } catch (error) {
    return refuse('invalid', `unreadable key: ${error instanceof Error ? error.message : String(error)}`);
  }
  const thumbprint = jwkThumbprint(x);
  if (claimed !== null && claimed !== thumbprint) {
    return refuse(
      'thumbprint_mismatch',
      `keyId is not the key's RFC 7638 thumbprint (${thumbprint})`,
      thumbprint,
    );
  }
  return { keyId: thumbprint, thumbprint, status: 'ok', source, createdAt, publicKey };
}

/**
 * The published keys a file holds: the API envelope `{success, data: {keys: [...]}}`, `{keys: [...]}`, a bare
 * array of keys, a single key object, or PEM text (one or more `-----BEGIN PUBLIC KEY-----` blocks, each key's id
 * then being its thumbprint).
 *
 * @param {string} text
 * @returns {Record<string, unknown>[]}
 */
export function parseKeysText(text) {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed.startsWith('-----BEGIN')) {
    const blocks = trimmed.match(PEM_BLOCK);
    if (!blocks) throw new Error('PEM text without a "-----BEGIN PUBLIC KEY-----" block');
    return blocks.map((publicKeyPem) => ({ publicKeyPem }));
  }
  let parsed;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    throw new Error('neither JSON nor a PEM public key');
  }
  if (parsed?.success === false)
    throw new Error(`the file holds an API error: ${JSON.stringify(parsed.error ?? parsed)}`);
  const list = Array.isArray(parsed)
    ? parsed
    : Array.isArray(parsed?.data?.keys)
      ? parsed.data.keys
      : Array.isArray(parsed?.keys)
        ? parsed.keys
        : parsed && typeof parsed === 'object' && (parsed.jwk || parsed.publicKeyPem || parsed.kty)
          ? [parsed]
          : null;
  if (!list)
    throw new Error('no keys: expected {data: {keys: [...]}}, {keys: [...]}, an array of keys or PEM');
  return list;
}

/**
 * A keyring: keyId → KeyObject, from published keys. Refused keys are kept in `rejected` (the verifier reports
 * them and treats them as a failure) and are not usable.
 */
export class Keyring {
  constructor() {
    /** @type {Map<string, import('node:crypto').KeyObject>} */
    this.keys = new Map();
    /** @type {ReturnType<typeof loadPublishedKey>[]} */
    this.entries = [];
  }

  /** @param {Record<string, unknown>} published @param {string} source */
  add(published, source) {
    const loaded = loadPublishedKey(published, source);
    if (loaded.status === 'ok' && this.keys.has(loaded.keyId)) return loaded; // the same key again
    this.entries.push(loaded);
    if (loaded.status === 'ok') this.keys.set(loaded.keyId, loaded.publicKey);
    return loaded;
  }

  /** @param {string} keyId */
  get(keyId) {
    return this.keys.get(keyId);
  }

  get rejected() {
    return this.entries.filter((entry) => entry.status !== 'ok');
  }

  get size() {
    return this.keys.size;
  }
}
