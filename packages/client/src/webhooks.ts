import { type GovernanceEvent, toGovernanceEvent } from './events.js';

/**
 * A delivery that fails verification: a missing header, a stale timestamp, or no signature that matches. (A
 * configuration that cannot verify anything, such as a malformed secret, throws `TypeError` instead.)
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** Request headers as Node (`IncomingHttpHeaders`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders =
  { get(name: string): string | null } | Record<string, string | readonly string[] | undefined>;

export interface VerifyWebhookInput {
  /** The raw body, exactly as received (parse it only after verification). */
  body: string | Uint8Array | ArrayBuffer;
  headers: WebhookHeaders;
  /**
   * The webhook's `whsec_…` secret, or several: during a rotation's grace period pass the new and the old one, and
   * a delivery signed with either is accepted. At least one; each must be base64 (after `whsec_`), or `TypeError`.
   */
  secrets: string | readonly string[];
  /**
   * How far `webhook-timestamp` may be from now, in seconds (default 300, as Standard Webhooks advise): finite, at
   * least 0, or `TypeError`.
   */
  toleranceSeconds?: number;
  /** The time to compare the timestamp with (default: now): a valid `Date` or finite milliseconds, or `TypeError`. */
  now?: Date | number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Verifies a delivery per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature` holding one or
 * more `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`) with WebCrypto, comparing in constant time, and returns
 * the event with its id. Throws `WebhookVerificationError` for a delivery that does not verify, and `TypeError`,
 * before looking at the delivery, for a configuration that cannot verify any (no secret, a malformed one, a
 * tolerance or a time that is not a finite number).
 */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<GovernanceEvent> {
  // The configuration first: a mistake there is not a forged delivery, and must not pass for one (or skip a check).
  const keys = secretKeys(input.secrets);
  const tolerance = input.toleranceSeconds ?? 300;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError(`toleranceSeconds must be a finite number, at least 0 (got ${String(tolerance)})`);
  }
  const nowMs =
    input.now === undefined ? Date.now() : input.now instanceof Date ? input.now.getTime() : input.now;
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) {
    throw new TypeError(
      `now must be a valid Date or a finite number of milliseconds (got ${String(input.now)})`,
    );
  }

  const id = header(input.headers, 'webhook-id');
  const timestamp = header(input.headers, 'webhook-timestamp');
  const signatureHeader = header(input.headers, 'webhook-signature');
  if (!id || !timestamp || !signatureHeader) {
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature');
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('Invalid webhook-timestamp');
  const nowSeconds = Math.floor(nowMs / 1000);
  const sentAt = Number(timestamp);
  if (sentAt < nowSeconds - tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (sentAt > nowSeconds + tolerance) throw new WebhookVerificationError('Message timestamp too new');

  const body = bytesOf(input.body);
  const signed = concat(encoder.encode(`${id}.${timestamp}.`), body);
  // Space-separated `v1,<base64>` entries; several headers joined as a list (`, `) are read the same way.
  const candidates = signatureHeader
    .split(/\s+/)
    .map((part) => part.replace(/,+$/, '').split(','))
    .filter((pair) => pair.length === 2 && pair[0] === 'v1')
    .map((pair) => decodeBase64(pair[1]!))
    .filter((bytes): bytes is Uint8Array<ArrayBuffer> => bytes !== null);

  let matched = false;
  for (const key of keys) {
    const expected = await hmacSha256(key, signed);
    for (const candidate of candidates) {
      // Every candidate is compared, whatever matched before: the time does not tell which one did.
      if (constantTimeEqual(expected, candidate)) matched = true;
    }
  }
  if (!matched) throw new WebhookVerificationError('No matching signature found');

  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(body));
  } catch {
    throw new WebhookVerificationError('The body is not JSON');
  }
  try {
    return toGovernanceEvent(id, json);
  } catch (err) {
    throw new WebhookVerificationError((err as Error).message);
  }
}

/** Compares two byte strings in time that depends on their length only. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}

/**
 * A header's value. Several values (a Node-style array, every key that names it in any case) are joined as an HTTP
 * list (`, `), as `Headers.get` joins them: none is dropped.
 */
function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | readonly string[] | undefined>;
  const values: string[] = [];
  for (const key of Object.keys(record)) {
    if (key.toLowerCase() !== name) continue;
    const value = record[key];
    if (typeof value === 'string') values.push(value);
    else if (Array.isArray(value)) values.push(...(value as readonly unknown[]).filter(isString));
  }
  return values.length === 0 ? undefined : values.join(', ');
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

/** The secrets' keys; `TypeError` for none, or one that is not a (`whsec_`-prefixed) base64 key. */
function secretKeys(secrets: string | readonly string[]): Uint8Array<ArrayBuffer>[] {
  const list: readonly unknown[] =
    typeof secrets === 'string' ? [secrets] : Array.isArray(secrets) ? secrets : [];
  if (list.length === 0) throw new TypeError('No secret to verify with: pass the webhook’s whsec_… secret');
  return list.map((secret, index) => {
    const decoded =
      typeof secret === 'string'
        ? decodeBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret)
        : null;
    if (!decoded || decoded.length === 0) {
      throw new TypeError(`secrets[${index}] is not a webhook secret (whsec_ followed by base64)`);
    }
    return decoded;
  });
}

async function hmacSha256(key: Uint8Array<ArrayBuffer>, data: Uint8Array<ArrayBuffer>): Promise<Uint8Array> {
  const cryptoKey = await globalThis.crypto.subtle.importKey(
    'raw',
    key,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', cryptoKey, data));
}

function bytesOf(body: string | Uint8Array | ArrayBuffer): Uint8Array {
  if (typeof body === 'string') return encoder.encode(body);
  return body instanceof Uint8Array ? body : new Uint8Array(body);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function decodeBase64(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    const binary = atob(text);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}
