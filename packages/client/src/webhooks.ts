import { type GovernanceEvent, toGovernanceEvent } from './events.js';

/** A webhook that fails verification: a missing header, a stale timestamp, or no signature that matches. */
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
   * a delivery signed with either is accepted.
   */
  secrets: string | readonly string[];
  /** How far `webhook-timestamp` may be from now, in seconds (default 300, as Standard Webhooks advise). */
  toleranceSeconds?: number;
  /** The time to compare the timestamp with (default: now). */
  now?: Date | number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Verifies a delivery per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature` holding one or
 * more `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`) with WebCrypto, comparing in constant time, and returns
 * the event with its id. Throws `WebhookVerificationError`.
 */
export async function verifyWebhook(input: VerifyWebhookInput): Promise<GovernanceEvent> {
  const id = header(input.headers, 'webhook-id');
  const timestamp = header(input.headers, 'webhook-timestamp');
  const signatureHeader = header(input.headers, 'webhook-signature');
  if (!id || !timestamp || !signatureHeader) {
    throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature');
  }
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('Invalid webhook-timestamp');
  const nowSeconds = Math.floor(
    (input.now === undefined ? Date.now() : typeof input.now === 'number' ? input.now : input.now.getTime()) /
      1000,
  );
  const tolerance = input.toleranceSeconds ?? 300;
  const sentAt = Number(timestamp);
  if (sentAt < nowSeconds - tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (sentAt > nowSeconds + tolerance) throw new WebhookVerificationError('Message timestamp too new');

  const body = bytesOf(input.body);
  const signed = concat(encoder.encode(`${id}.${timestamp}.`), body);
  const candidates = signatureHeader
    .split(' ')
    .map((part) => part.split(','))
    .filter((pair) => pair.length === 2 && pair[0] === 'v1')
    .map((pair) => decodeBase64(pair[1]!))
    .filter((bytes): bytes is Uint8Array<ArrayBuffer> => bytes !== null);
  const secrets = typeof input.secrets === 'string' ? [input.secrets] : input.secrets;
  if (secrets.length === 0) throw new WebhookVerificationError('No secret to verify with');

  let matched = false;
  for (const secret of secrets) {
    const expected = await hmacSha256(secretBytes(secret), signed);
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

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | readonly string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return typeof value === 'string' ? value : value?.[0];
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const decoded = decodeBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (!decoded || decoded.length === 0)
    throw new WebhookVerificationError('The secret is not a whsec_ secret');
  return decoded;
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
