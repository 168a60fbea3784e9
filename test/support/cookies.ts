import type { LightMyRequestResponse } from 'fastify';

/** The cookies a response sets: name → the whole Set-Cookie line. */
export function setCookies(res: LightMyRequestResponse): Map<string, string> {
  const raw = res.headers['set-cookie'];
  const lines = Array.isArray(raw) ? raw : raw ? [String(raw)] : [];
  return new Map(lines.map((line) => [line.slice(0, line.indexOf('=')), line]));
}

/** The value of a Set-Cookie line, decoded. */
export function cookieValue(line: string | undefined): string | undefined {
  return line ? decodeURIComponent(line.slice(line.indexOf('=') + 1, line.indexOf(';'))) : undefined;
}
