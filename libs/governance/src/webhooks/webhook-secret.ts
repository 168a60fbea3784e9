import { createHmac, randomBytes } from 'node:crypto';

/** A new signing secret: `whsec_` and 32 random bytes in base64 (Standard Webhooks). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the secret's key (the base64 after `whsec_`). */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
