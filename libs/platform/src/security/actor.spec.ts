import { describe, expect, it } from 'vitest';
import { type Actor, agentScopeOf, canAccessAgent } from './actor.js';

const base: Actor = {
  type: 'user',
  credential: 'jwt',
  organizationId: 'o'.repeat(24),
  plan: 'sandbox',
  userId: 'u'.repeat(24),
  email: 'a@example.com',
  role: 'member',
};
const A = 'a'.repeat(24);
const B = 'b'.repeat(24);

describe('agent scope', () => {
  it('lets users and unscoped workspace keys reach every agent', () => {
    expect(canAccessAgent(base, A)).toBe(true);
    expect(agentScopeOf(base)).toBeNull();
    const key: Actor = { ...base, type: 'api_key', credential: 'workspaceKey', scope: { readOnly: true } };
    expect(canAccessAgent(key, B)).toBe(true);
    expect(agentScopeOf(key)).toBeNull();
  });

  it('limits a workspace key with agentIds to those agents', () => {
    const key: Actor = { ...base, type: 'api_key', credential: 'workspaceKey', scope: { agentIds: [A] } };
    expect(canAccessAgent(key, A)).toBe(true);
    expect(canAccessAgent(key, B)).toBe(false);
    expect(agentScopeOf(key)).toEqual([A]);
  });

  it('limits an agent key to its own agent', () => {
    const agent: Actor = { ...base, type: 'agent', credential: 'agentKey', agentId: A };
    expect(canAccessAgent(agent, A)).toBe(true);
    expect(canAccessAgent(agent, B)).toBe(false);
    expect(agentScopeOf(agent)).toEqual([A]);
  });
});
