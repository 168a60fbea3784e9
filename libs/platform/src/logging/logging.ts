import type { IncomingMessage } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../config/app-config.js';

const SECRET_QUERY = /([?&](?:token|code|key|apiKey|api_key|secret|password|state|SAMLResponse)=)[^&]*/gi;

// A path segment of 32 or more token characters is a secret (invitation tokens travel in the path); object ids
// (24 hex characters) and ordinary words are shorter.
const SECRET_SEGMENT = /\/[A-Za-z0-9_-]{32,}(?=\/|\?|#|$)/g;

/** Query values and path segments that carry secrets (tokens, codes) are replaced before a URL is logged. */
export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_QUERY, '$1[Redacted]').replace(SECRET_SEGMENT, '/[Redacted]');
}

/**
 * Fields that hold secrets wherever they appear (one level down: `*.password` matches `body.password`). Names that
 * are also ordinary fields, `code` (an error code, a SQLSTATE) and `key`, are redacted only inside request-shaped
 * objects, where they would be an MFA code or a key: an error's `code` stays readable.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.currentPassword',
  '*.newPassword',
  '*.token',
  '*.tempToken',
  '*.secret',
  '*.apiKey',
  '*.clientSecret',
  '*.backupCodes',
  '*.secretEncrypted',
  '*.jwtSecret',
  ...['body', 'dto', 'input', 'query'].flatMap((at) => [`${at}.code`, `${at}.key`]),
];

/** JSON logs with the request id on every line; secrets redacted; bodies never logged. */
export function loggerParams(config: AppConfig): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      genReqId: (req: IncomingMessage) => String((req as { id?: unknown }).id ?? 'unknown'),
      redact: { paths: REDACT_PATHS, censor: '[Redacted]' },
      customLogLevel: (_req, res, err) =>
        err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        req: (req: {
          id?: string;
          method?: string;
          url?: string;
          remoteAddress?: string;
          headers?: Record<string, unknown>;
        }) => ({
          id: req.id,
          method: req.method,
          url: redactUrl(req.url),
          remoteAddress: req.remoteAddress,
          userAgent: req.headers?.['user-agent'],
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
      },
      quietReqLogger: true,
      autoLogging: { ignore: (req) => req.url === '/health' || req.url === '/api/v1/health' },
    },
  };
}
