import { describe, expect, it } from 'vitest';
import { AppError, ErrorCode, type ErrorCodeName } from './app-error.js';

describe('AppError codes', () => {
  it('accepts the platform codes and the codes modules declare, and a misspelt code does not compile', () => {
    const declaredByModules: ErrorCodeName[] = [
      'INVITE_EXPIRED',
      'INVALID_MFA_CODE',
      'SVC_DUPLICATE_REQUEST',
    ];
    expect(new AppError(404, ErrorCode.NOT_FOUND, 'Missing').code).toBe('NOT_FOUND');
    expect(declaredByModules).toHaveLength(3);
    // Checked by `npm run typecheck`: each line below is an error, or the directive itself fails the build.
    // @ts-expect-error: not a declared code
    expect(new AppError(400, 'VALIDATON_ERROR', 'Typo').code).toBe('VALIDATON_ERROR');
    // @ts-expect-error: not a declared code
    const misspelt: ErrorCodeName = 'INVITE_EXPRIED';
    expect(misspelt).toBe('INVITE_EXPRIED');
    // @ts-expect-error: a status helper takes only declared codes as well
    expect(AppError.unauthorized('No', 'UNAUTHORISED').code).toBe('UNAUTHORISED');
  });
});
