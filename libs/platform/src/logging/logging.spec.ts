import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { AppConfig } from '../config/app-config.js';
import { loggerParams, redactUrl } from './logging.js';

/** A pino logger with the service's redaction, writing its lines to an array. */
function redactingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  // The redaction the service configures, as loggerParams hands it to pino-http.
  const { redact } = loggerParams({ logLevel: 'info' } as AppConfig).pinoHttp as {
    redact: pino.LoggerOptions['redact'];
  };
  return { lines, logger: pino({ redact }, sink) };
}

describe('log redaction', () => {
  it('masks secret query parameters in logged URLs and keeps the rest', () => {
    expect(redactUrl('/api/v1/events/stream?token=abc123&x=1')).toBe(
      '/api/v1/events/stream?token=[Redacted]&x=1',
    );
    expect(redactUrl('/cb?code=c0de&state=s7&page=2')).toBe('/cb?code=[Redacted]&state=[Redacted]&page=2');
    expect(redactUrl('/api/v1/health')).toBe('/api/v1/health');
    const token = 'Zm9vYmFyYmF6cXV4LXRva2VuLXZhbHVlLTEyMzQ1Njc4OQ';
    expect(redactUrl(`/api/v1/team/invites/validate/${token}`)).toBe(
      '/api/v1/team/invites/validate/[Redacted]',
    );
    expect(redactUrl(`/api/v1/team/invites/${token}/accept?x=1`)).toBe(
      '/api/v1/team/invites/[Redacted]/accept?x=1',
    );
    expect(redactUrl('/api/v1/audit/65f0a1b2c3d4e5f6a7b8c9d0')).toBe(
      '/api/v1/audit/65f0a1b2c3d4e5f6a7b8c9d0',
    );
  });

  it('never writes authorization headers, cookies, API keys, passwords or tokens', () => {
    const { lines, logger } = redactingLogger();
    logger.info({
      req: {
        headers: {
          authorization: 'Bearer eyJsecret',
          cookie: 'svc_oauth_token=secret',
          'x-api-key': 'svc_live_secret',
        },
      },
      body: { password: 'Hunter2-secret', token: 'tok-secret', apiKey: 'key-secret', secret: 'whsec_secret' },
    });
    const out = lines.join('');
    expect(out).not.toMatch(
      /eyJsecret|oauth_token=secret|svc_live_secret|Hunter2|tok-secret|key-secret|whsec_secret/,
    );
    expect(out.match(/\[Redacted\]/g)).toHaveLength(7);
  });

  it('redacts MFA codes and keys in request-shaped objects but keeps error codes readable', () => {
    const { lines, logger } = redactingLogger();
    logger.info({ body: { code: '123456', key: 'svc_live_k' }, dto: { code: '654321' } }, 'mfa');
    logger.error(
      { err: { type: 'AppError', code: 'SERVICE_UNAVAILABLE', message: 'down' }, code: 'INTERNAL_ERROR' },
      'Unhandled error',
    );
    logger.error({ err: { code: '23505', detail: 'duplicate key' } }, 'Database error');
    const [mfa, appError, dbError] = lines.map((line) => JSON.parse(line));
    expect(mfa.body).toEqual({ code: '[Redacted]', key: '[Redacted]' });
    expect(mfa.dto).toEqual({ code: '[Redacted]' });
    expect(appError.err.code).toBe('SERVICE_UNAVAILABLE');
    expect(appError.code).toBe('INTERNAL_ERROR');
    expect(dbError.err.code).toBe('23505');
  });
});
