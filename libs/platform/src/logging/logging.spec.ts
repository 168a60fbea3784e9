import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { AppConfig } from '../config/app-config.js';
import { AppLogger } from './app-logger.js';
import {
  createRootLogger,
  logRequestAborted,
  logRequestCompleted,
  redactUrl,
  requestContext,
} from './logging.js';

/** The service's root logger (its redaction, its request ids), writing its lines to an array. */
function redactingLogger(level = 'info') {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: createRootLogger({ logLevel: level } as AppConfig, sink) };
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
    expect(redactUrl('/api/v1/subjects/acct%3A0042/report?x=1')).toBe(
      '/api/v1/subjects/[Redacted]/report?x=1',
    );
    expect(redactUrl('/api/subjects/customer-7/decisions')).toBe('/api/subjects/[Redacted]/decisions');
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

describe('request logging', () => {
  const request = (url: string) => ({
    id: 'req-1',
    method: 'POST',
    url,
    ip: '203.0.113.9',
    headers: { 'user-agent': 'agent/1', authorization: 'Bearer eyJsecret' },
  });

  it('stamps every line written inside a request with its id, and none outside', async () => {
    const { lines, logger } = redactingLogger();
    logger.info('before');
    await requestContext.run('req-42', async () => {
      await Promise.resolve();
      logger.warn({ field: 1 }, 'inside');
    });
    const [before, inside] = lines.map((line) => JSON.parse(line));
    expect(before.reqId).toBeUndefined();
    expect(inside).toMatchObject({ reqId: 'req-42', field: 1, msg: 'inside', level: 40 });
  });

  it('writes one completion line at the level of the status, with the URL masked and no headers', () => {
    const { lines, logger } = redactingLogger();
    logRequestCompleted(logger, request('/api/v1/events/stream?token=abc'), 200, 3.4);
    logRequestCompleted(logger, request('/api/v1/traces'), 422, 1);
    logRequestCompleted(logger, request('/api/v1/traces'), 503, 1);
    const [ok, refused, failed] = lines.map((line) => JSON.parse(line));
    expect(ok).toMatchObject({
      level: 30,
      msg: 'request completed',
      reqId: 'req-1',
      req: {
        method: 'POST',
        url: '/api/v1/events/stream?token=[Redacted]',
        remoteAddress: '203.0.113.9',
        userAgent: 'agent/1',
      },
      res: { statusCode: 200 },
      responseTime: 3,
    });
    expect(refused.level).toBe(40);
    expect(failed.level).toBe(50);
    expect(lines.join('')).not.toContain('eyJsecret');
  });

  it('writes an info line for a request its client abandoned, and none below info', () => {
    const { lines, logger } = redactingLogger();
    logRequestAborted(logger, request('/api/v1/events/stream?token=abc'));
    const [aborted] = lines.map((line) => JSON.parse(line));
    expect(aborted).toMatchObject({
      level: 30,
      msg: 'request aborted by the client',
      reqId: 'req-1',
      req: { url: '/api/v1/events/stream?token=[Redacted]' },
    });
    expect(aborted.res).toBeUndefined();
    const quiet = redactingLogger('warn');
    logRequestAborted(quiet.logger, request('/api/v1/traces'));
    expect(quiet.lines).toHaveLength(0);
  });

  it('writes nothing for health checks or below the configured level', () => {
    const { lines, logger } = redactingLogger('warn');
    logRequestCompleted(logger, request('/api/v1/traces'), 201, 1);
    logRequestCompleted(logger, request('/health'), 503, 1);
    logRequestCompleted(logger, request('/api/v1/traces'), 404, 1);
    expect(lines.map((line) => JSON.parse(line).res.statusCode)).toEqual([404]);
  });
});

describe('AppLogger (Nest logger on pino)', () => {
  function appLogger(level = 'info') {
    const { lines, logger } = redactingLogger(level);
    const nest = Object.assign(new AppLogger({ logLevel: level } as AppConfig), { pino: logger });
    return { lines, nest, read: () => lines.map((line) => JSON.parse(line)) };
  }

  it('takes the last parameter as the context and merges object messages', () => {
    const { nest, read } = appLogger();
    nest.log('Service started', 'Bootstrap');
    nest.warn({ attempt: 3, password: 'Hunter2' }, 'retrying %s', 'Mail');
    const [started, retry] = read();
    expect(started).toMatchObject({ level: 30, msg: 'Service started', context: 'Bootstrap' });
    expect(retry).toMatchObject({
      level: 40,
      msg: 'retrying %s',
      context: 'Mail',
      attempt: 3,
      password: '[Redacted]',
    });
  });

  it('serializes errors with their stack, including Nest’s (message, stack, context) form', () => {
    const { nest, read } = appLogger();
    nest.error(new Error('boom'), 'Worker');
    nest.error('Unhandled', 'Error: Unhandled\n    at frame (file.js:1:1)', 'ExceptionsHandler');
    const [thrown, nestForm] = read();
    expect(thrown).toMatchObject({ level: 50, context: 'Worker', err: { message: 'boom', type: 'Error' } });
    expect(thrown.err.stack).toContain('Error: boom');
    expect(nestForm).toMatchObject({
      level: 50,
      context: 'ExceptionsHandler',
      err: { message: 'Unhandled' },
    });
    expect(nestForm.err.stack).toContain('at frame');
  });

  it('writes nothing below its level', () => {
    const { nest, lines } = appLogger('warn');
    nest.log('quiet');
    nest.debug('quieter');
    nest.verbose('quietest');
    expect(lines).toHaveLength(0);
  });
});
