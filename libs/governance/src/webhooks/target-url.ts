import { AppError } from '#platform';
import { resolveTarget, SsrfRefusal } from '#platform';
import { WebhookErrorCode } from './webhooks.errors.js';

const urlError = (field: string, message: string, code = 'VALIDATION_ERROR') =>
  code === 'VALIDATION_ERROR'
    ? AppError.validation(message, [{ field, message }])
    : new AppError(400, WebhookErrorCode.WEBHOOK_URL_NOT_ALLOWED, message, { details: [{ field, message }] });

/**
 * An absolute http(s) URL whose host resolves to addresses the SSRF guard allows, normalised: what a webhook or a
 * notification integration may post to. 400 VALIDATION_ERROR for a malformed URL, 400 WEBHOOK_URL_NOT_ALLOWED for a
 * refused address.
 */
export async function checkTargetUrl(raw: string, allowPrivate: boolean, field = 'url'): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw urlError(field, `${field} must be an absolute http or https URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw urlError(field, `${field} must be an absolute http or https URL`);
  }
  if (url.hash) throw urlError(field, `${field} must not have a fragment`);
  try {
    await resolveTarget(url, allowPrivate);
  } catch (err) {
    if (err instanceof SsrfRefusal) throw urlError(field, err.message, WebhookErrorCode.WEBHOOK_URL_NOT_ALLOWED);
    throw urlError(field, `${field}'s host ${url.hostname} does not resolve`);
  }
  return url.toString();
}

/** A URL for logs and listings: without credentials, path or query (they may carry tokens). */
export function urlHost(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}`;
}
