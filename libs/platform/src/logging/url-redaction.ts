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

// The segment after /subjects/ is a person's reference (GET /subjects/:ref/decisions, /report, /erasure): personal
// data, never written (docs/data-protection.md, "Subject references").
const SUBJECT_SEGMENT = /(\/subjects\/)[^/?#]+/g;

const ENCODED_UNRESERVED = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[DEde]|5[Ff]|7[Ee])/g;

/**
 * Percent-encoded unreserved characters (letters, digits, `-._~`) mean the same as the characters themselves
 * (RFC 3986 §6.2.2.2), and the router decodes them: `/%61pi/v1/auth/login` reaches the login handler. They are
 * decoded in the path before anything looks at it, so every hook (the auth limiter, versioning, the header checks)
 * sees the path the router will match.
 */
export function decodeUnreservedInPath(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (!path.includes('%')) return url;
  const decoded = path.replace(ENCODED_UNRESERVED, (escape) =>
    String.fromCharCode(parseInt(escape.slice(1), 16)),
  );
  return query === -1 ? decoded : decoded + url.slice(query);
}

/**
 * Query values and path segments that carry secrets (tokens, codes) or a person's reference are replaced before a
 * URL is written.
 */
export function redactUrl(url: string | undefined): string | undefined {
  return url
    ?.replace(SECRET_QUERY, '$1[Redacted]')
    .replace(SECRET_SEGMENT, '/[Redacted]')
    .replace(SUBJECT_SEGMENT, '$1[Redacted]');
}
