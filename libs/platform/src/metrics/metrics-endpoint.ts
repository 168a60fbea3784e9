import { createHash, timingSafeEqual } from 'node:crypto';

/** Where the exposition is served, on the main port (behind METRICS_TOKEN) and on METRICS_PORT. */
export const METRICS_PATH = '/metrics';

/** What a presented token is compared with: its SHA-256, so that tokens of every length compare in the same time. */
export function metricsTokenDigest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

const BEARER = /^Bearer +(\S+) *$/i;

/** Whether an Authorization header is `Bearer <the token>`, compared in constant time. */
export function bearerMatches(authorization: string | undefined, expected: Buffer): boolean {
  const presented = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
  // Hashed even when absent: a missing or malformed header takes as long as a wrong token.
  const same = timingSafeEqual(metricsTokenDigest(presented ?? ''), expected);
  return same && presented !== undefined;
}
