import { describe, expect, it } from 'vitest';
import { AppError } from '#platform';
import { FriaErrorCode, friaOperation } from './fria.errors.js';

describe('friaOperation', () => {
  it('passes an AppError through unchanged', async () => {
    const original = AppError.notFound('Assessment');
    await expect(friaOperation(FriaErrorCode.FRIA_GET_FAILED, () => Promise.reject(original))).rejects.toBe(
      original,
    );
  });

  it('turns an unexpected error into a generic 500 with the operation code', async () => {
    const error = await friaOperation(FriaErrorCode.FRIA_LIST_FAILED, () =>
      Promise.reject(new Error('connection reset')),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 500, code: 'FRIA_LIST_FAILED' });
    expect((error as AppError).message).not.toContain('connection reset');
  });
});
