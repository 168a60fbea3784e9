/**
 * The secrets a URL may carry, masked the same way wherever a URL is written: log lines (logging.ts) and the spans
 * of the service's tracing (apps/api/src/tracing.ts). No import: the process's entry loads this before the
 * application, when the tracing SDK starts, and nothing it loads may come before the SDK's instrumentations.
 */

/** Query parameters whose values are secrets: stream and reset tokens, sign-in codes and states, SAML messages. */
export const SECRET_QUERY_PARAMS = [
  'token',
  'code',
  'key',
  'apiKey',
  'api_key',
  'secret',
  'password',
  'state',
  'SAMLResponse',
] as const;

const SECRET_QUERY = new RegExp(`([?&](?:${SECRET_QUERY_PARAMS.join('|')})=)[^&]*`, 'gi');

// A path segment of 32 or more token characters is a secret (invitation tokens travel in the path); object ids
// (24 hex characters) and ordinary words are shorter.
const SECRET_SEGMENT = /\/[A-Za-z0-9_-]{32,}(?=\/|\?|#|$)/g;

/** Query values and path segments that carry secrets (tokens, codes) are replaced before a URL is written. */
export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY, '$1[Redacted]').replace(SECRET_SEGMENT, '/[Redacted]');
}
