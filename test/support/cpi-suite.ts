import { expect } from 'vitest';
import type { Registered, TestContext } from './app.js';
import type { TestAgent } from './builders.js';
import { KEYS } from './api-keys-suite.js';
import { TRACES, traceBody } from './traces-suite.js';

export const CPI = '/api/v1/cpi';
export const INGEST = `${CPI}/ingest`;

/** Creates a workspace key of the owner's organization; readOnly keys are refused on POST /cpi/ingest. */
export async function workspaceKey(
  ctx: TestContext,
  owner: Registered,
  readOnly = false,
): Promise<{ id: string; key: string }> {
  const res = await ctx.post(KEYS, {
    token: owner.token,
    body: { name: readOnly ? 'RO' : 'CPI', scope: { readOnly } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

/** Ingests a trace whose agent decided `decision` with the given confidence; returns its id. */
export async function ingestDecision(
  ctx: TestContext,
  agent: TestAgent,
  decision = 'deny',
  confidence = 0.8,
  prompt = 'Can I return my blender?',
): Promise<string> {
  const res = await ctx.post(TRACES, {
    apiKey: agent.key,
    body: traceBody({ confidence, rationale: 'Outside the window' }, { prompt }, { action: decision }),
  });
  expect([201, 202], res.body).toContain(res.statusCode);
  return res.json().data.id;
}
