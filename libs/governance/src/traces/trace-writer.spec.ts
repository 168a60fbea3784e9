import { DatabaseError } from 'pg';
import { describe, expect, it } from 'vitest';
import { AppError, ErrorCode, markConnectionError } from '#platform';
import { isRowError, isTransient } from './trace-writer.js';

const dbError = (code: string) =>
  Object.assign(new DatabaseError(`error ${code}`, 0, 'error'), { code, severity: 'ERROR' });

describe('trace writer error classes', () => {
  it('takes data, constraint and raised errors for a row’s fault, also when wrapped as a cause', () => {
    for (const code of ['22P05', '23505', 'P0001']) {
      expect(isRowError(dbError(code))).toBe(true);
      expect(isRowError(new Error('Failed query: insert …', { cause: dbError(code) }))).toBe(true);
      expect(isTransient(dbError(code))).toBe(false);
    }
  });

  it('takes connection, rollback, resource, lock-timeout and shutdown errors, and unreachable servers, for the database’s', () => {
    for (const code of ['08006', '40001', '40P01', '53300', '55P03', '57014', '57P01']) {
      expect(isTransient(dbError(code))).toBe(true);
      expect(isRowError(dbError(code))).toBe(false);
    }
    // As the database client marks a socket error it meets (libs/platform/src/db/database-errors.spec.ts).
    const refused = markConnectionError(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
        code: 'ECONNREFUSED',
        syscall: 'connect',
      }),
    );
    expect(isTransient(refused)).toBe(true);
    expect(isRowError(refused)).toBe(false);
    expect(isTransient(new Error('timeout exceeded when trying to connect'))).toBe(true);
  });

  it('takes neither for a programming error or a refusal of our own', () => {
    expect(isTransient(dbError('42703'))).toBe(false);
    expect(isRowError(dbError('42703'))).toBe(false);
    expect(isTransient(AppError.unauthorized('Invalid API key'))).toBe(false);
    expect(isTransient(new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, 'busy'))).toBe(true);
    expect(isTransient('not an error')).toBe(false);
    // A fault of ours is a 500, not a 503 that a client would retry forever.
    expect(isTransient(new TypeError('Cannot read properties of undefined'))).toBe(false);
  });
});
