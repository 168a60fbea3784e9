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
});
