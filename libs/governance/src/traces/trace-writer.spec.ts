import { DatabaseError } from 'pg';
import { describe, expect, it } from 'vitest';
import { isStatementError } from './trace-writer.js';

describe('isStatementError', () => {
  const refused = Object.assign(new DatabaseError('refused by trigger', 0, 'error'), {
    code: 'P0001',
    severity: 'ERROR',
  });

  it('recognises an error the database answered for a statement, also when wrapped as a cause', () => {
    expect(isStatementError(refused)).toBe(true);
    expect(isStatementError(new Error('Failed query: insert …', { cause: refused }))).toBe(true);
  });

  it('does not take connection failures or other errors for statement errors', () => {
    const refusedConnection = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    expect(isStatementError(refusedConnection)).toBe(false);
    expect(isStatementError(new Error('timeout exceeded when trying to connect'))).toBe(false);
    expect(isStatementError('not an error')).toBe(false);
  });
});
