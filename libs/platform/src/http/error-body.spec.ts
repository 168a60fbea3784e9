import { describe, expect, it } from 'vitest';
import { AppError } from './app-error.js';
import { MAX_ERROR_DETAILS, renderError } from './error-body.js';

describe('renderError', () => {
  it('lists at most MAX_ERROR_DETAILS details and says how many there were', () => {
    const details = Array.from({ length: 25 }, (_, i) => ({ field: `f${i}`, message: `f${i} is wrong` }));
    const { status, body } = renderError(AppError.validation('Validation failed', details));
    expect(status).toBe(400);
    expect(body.details).toEqual(details.slice(0, MAX_ERROR_DETAILS));
    expect(body.detailsTotal).toBe(25);
    expect(renderError(AppError.validation('x', details.slice(0, 3))).body).not.toHaveProperty(
      'detailsTotal',
    );
  });

  it('renders a client that went away mid-body as its 400, not as an unexpected 500', () => {
    for (const code of ['ECONNRESET', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']) {
      const aborted = Object.assign(new Error('aborted'), { code, statusCode: 400 });
      const rendered = renderError(aborted, 'req-1');
      expect(rendered).toMatchObject({ status: 400, unexpected: false, body: { code: 'VALIDATION_ERROR' } });
    }
  });

  it('keeps anything unknown a 500 whose body carries only the request id', () => {
    const rendered = renderError(
      Object.assign(new Error('boom'), { code: 'EWHATEVER', statusCode: 400 }),
      'req-2',
    );
    expect(rendered).toMatchObject({ status: 500, unexpected: true });
    expect(rendered.body).toEqual({
      success: false,
      error: 'Internal server error',
      code: 'INTERNAL_ERROR',
      requestId: 'req-2',
    });
  });

  it('renders the database unable to serve now as 503 with Retry-After, and other database errors as 500', () => {
    // As node-postgres raises them (a DatabaseError has a SQLSTATE `code` and a `severity`), bare or wrapped by the
    // query builder as its cause.
    const pgError = (code: string, message = 'x') =>
      Object.assign(new Error(message), { code, severity: 'ERROR' });
    const wrapped = (cause: Error) => new Error('Failed query: insert into users …', { cause });
    for (const err of [
      pgError('53300', 'sorry, too many clients already'),
      wrapped(pgError('40P01', 'deadlock detected')),
      wrapped(pgError('40001')),
      pgError('57014', 'canceling statement due to statement timeout'),
      pgError('57P01', 'terminating connection due to administrator command'),
      pgError('55P03', 'canceling statement due to lock timeout'),
      pgError('08006'),
      new Error('timeout exceeded when trying to connect'),
      wrapped(new Error('Connection terminated unexpectedly')),
    ]) {
      const rendered = renderError(err, 'req-9');
      expect(rendered.status, err.message).toBe(503);
      expect(rendered.body).toEqual({
        success: false,
        error: 'The database cannot serve the request now; retry shortly',
        code: 'SERVICE_UNAVAILABLE',
        requestId: 'req-9',
      });
      expect(rendered.headers).toEqual({ 'Retry-After': '1' });
      expect(rendered.unexpected).toBe(true);
    }
    for (const err of [
      pgError('23505', 'duplicate key'),
      wrapped(pgError('42P01', 'relation does not exist')),
      pgError('55000', 'database is not currently accepting connections'),
      Object.assign(new Error('x'), { code: '53300' }), // no severity: not a database error
      new Error('Connection terminated unexpectedly!'),
    ]) {
      expect(renderError(err, 'req-9').status, err.message).toBe(500);
    }
  });
});
