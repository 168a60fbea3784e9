import { expect } from 'vitest';
import type { Role } from '#platform';
import type { TestContext } from './app.js';

export const MEMBERS = '/api/v1/team/members';
export const member = (userId: string) => `${MEMBERS}/${userId}`;

export interface TeamMember {
  userId: string;
  name: string;
  email: string;
  role: Role;
  joinedAt: string;
  isActive: boolean;
  mfaEnabled: boolean;
  lastLoginIp: string | null;
  createdAt: string;
}

/** The helpers of the team suites, on the suite's context (read when called: it is created in beforeAll). */
export function teamHelpers(context: () => TestContext) {
  /** A fresh organization per test: its owner plus one member of each requested role. */
  async function team(...roles: Role[]) {
    const ctx = context();
    const owner = await ctx.register({ organizationName: 'Team Org' });
    const others = [];
    for (const role of roles) others.push(await ctx.addMember(owner.organization.id, role));
    return { owner, org: owner.organization.id, others };
  }

  async function members(token: string): Promise<TeamMember[]> {
    const res = await context().get(MEMBERS, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data as TeamMember[];
  }

  async function meStatus(token: string): Promise<{ status: number; code?: string; role?: string }> {
    const res = await context().get('/api/v1/auth/me', { token });
    const body = res.json();
    return { status: res.statusCode, code: body.code, role: body.data?.role };
  }

  return { team, members, meStatus };
}
