import { expect } from 'vitest';
import type { Registered, TestContext } from './app.js';
import { expectErrorEnvelope } from './assertions.js';

export const POLICIES = '/api/v1/policies';

export interface PolicyBody {
  id: string;
  name: string;
  description: string | null;
  outcome: 'block' | 'flag';
  conditions: { field: string; operator: string; value?: unknown }[];
  match: 'all' | 'any';
  agentIds: string[];
  priority: number;
  isActive: boolean;
  templateId: string | null;
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export const EMAIL_BLOCK = {
  name: 'No e-mail in answers',
  description: 'Blocks answers with an address.',
  outcome: 'block',
  conditions: [{ field: 'outputDecision.text', operator: 'matches', value: '[a-z]+@[a-z]+\\.com' }],
};
/** A well-formed id that names nothing. */
export const fakeId = (n: number) => n.toString(16).padStart(24, 'a');

/** The helpers of the policies suites, on the suite's context and owner (both made in beforeAll). */
export function policyHelpers(context: () => TestContext, owner: () => Registered) {
  async function create(body: unknown = EMAIL_BLOCK, token = owner().token): Promise<PolicyBody> {
    const res = await context().post(POLICIES, { token, body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as PolicyBody;
  }

  async function expectRefused(
    body: unknown,
    field: string,
    message: RegExp,
    method: 'post' | 'patch' = 'post',
    id?: string,
  ) {
    const url = id ? `${POLICIES}/${id}` : POLICIES;
    const res = await context()[method](url, { token: owner().token, body });
    const error = expectErrorEnvelope(res, 400, 'VALIDATION_ERROR');
    const details = error.details as { field: string; message: string }[];
    expect(details).toEqual(expect.arrayContaining([{ field, message: expect.stringMatching(message) }]));
    return details;
  }

  return { create, expectRefused };
}
