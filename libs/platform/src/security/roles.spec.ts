import { describe, expect, it } from 'vitest';
import { canEditOwnedResource, Permission, PLAN_FEATURES, planHasFeature } from './roles.js';

const ME = 'a'.repeat(24);
const OTHER = 'b'.repeat(24);

describe('role table', () => {
  it('lets owners and admins edit anyone’s resource, members only their own, viewers nothing', () => {
    expect(canEditOwnedResource({ role: 'owner', userId: ME }, OTHER)).toBe(true);
    expect(canEditOwnedResource({ role: 'admin', userId: ME }, OTHER)).toBe(true);
    expect(canEditOwnedResource({ role: 'member', userId: ME }, ME)).toBe(true);
    expect(canEditOwnedResource({ role: 'member', userId: ME }, OTHER)).toBe(false);
    expect(canEditOwnedResource({ role: 'member', userId: ME }, null)).toBe(false);
    expect(canEditOwnedResource({ role: 'viewer', userId: ME }, ME)).toBe(false);
  });

  it('matches the role table of test/role-matrix.e2e-spec.ts', () => {
    expect(Permission.read).toEqual(['owner', 'admin', 'member', 'viewer']);
    expect(Permission.editPolicies).toEqual(['owner', 'admin']);
    expect(Permission.editAgents).toEqual(['owner', 'admin', 'member']);
    expect(Permission.resolveReviews).toEqual(['owner', 'admin', 'member']);
    expect(Permission.manageTeam).toEqual(['owner', 'admin']);
    expect(Permission.deleteAlerts).toEqual(['owner']);
    expect(Permission.purge).toEqual(['owner']);
    expect(Permission.deleteOrganization).toEqual(['owner']);
  });

  it('matches the plan table', () => {
    expect(PLAN_FEATURES.sandbox).toEqual([]);
    expect(PLAN_FEATURES.scale).toEqual([]);
    expect([...PLAN_FEATURES.governance].sort()).toEqual([
      'complianceMapping',
      'friaWizard',
      'scheduledReports',
      'sso',
    ]);
    expect(planHasFeature('enterprise', 'scim')).toBe(true);
    expect(planHasFeature('governance', 'scim')).toBe(false);
    expect(planHasFeature('enterprise', 'cpiFeedbackIngest')).toBe(true);
    expect(planHasFeature('custom', 'cpiFeedbackIngest')).toBe(true);
  });
});
