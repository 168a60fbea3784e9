import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** Asserts the error envelope `{success: false, error, code}` with the given status and code; returns the body. */
export function expectErrorEnvelope(
  res: LightMyRequestResponse,
  status: number,
  code: string,
): Record<string, unknown> {
  expect(res.statusCode, res.body.slice(0, 500)).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json();
  expect(body).toMatchObject({ success: false, code });
  expect(typeof body.error).toBe('string');
  expect(body.error.length).toBeGreaterThan(0);
  expect(body).not.toHaveProperty('data');
  return body;
}
