import { describe, expect, it } from 'vitest';
import { type MembershipChange, removesActiveOwner, touchesOwner } from './team.service.js';

const owner = { role: 'owner' as const, isActive: true };
const suspendedOwner = { role: 'owner' as const, isActive: false };
const admin = { role: 'admin' as const, isActive: true };

describe('touchesOwner', () => {
  it('is true when granting the owner role or changing an owner in any way', () => {
    expect(touchesOwner(admin, { kind: 'role', role: 'owner' })).toBe(true);
    for (const change of [
      { kind: 'role', role: 'member' },
      { kind: 'suspend' },
      { kind: 'reactivate' },
      { kind: 'remove' },
    ] satisfies MembershipChange[]) {
      expect(touchesOwner(owner, change)).toBe(true);
    }
  });

  it('is false for changes among admins, members and viewers', () => {
    expect(touchesOwner(admin, { kind: 'role', role: 'viewer' })).toBe(false);
    expect(touchesOwner(admin, { kind: 'suspend' })).toBe(false);
    expect(touchesOwner({ role: 'viewer' }, { kind: 'remove' })).toBe(false);
  });
});

describe('removesActiveOwner', () => {
  it('is true when an active owner is demoted, suspended or removed', () => {
    expect(removesActiveOwner(owner, { kind: 'role', role: 'admin' })).toBe(true);
    expect(removesActiveOwner(owner, { kind: 'suspend' })).toBe(true);
    expect(removesActiveOwner(owner, { kind: 'remove' })).toBe(true);
  });

  it('is false when the owner stays one, is reactivated, or was not an active owner', () => {
    expect(removesActiveOwner(owner, { kind: 'role', role: 'owner' })).toBe(false);
    expect(removesActiveOwner(owner, { kind: 'reactivate' })).toBe(false);
    expect(removesActiveOwner(suspendedOwner, { kind: 'remove' })).toBe(false);
    expect(removesActiveOwner(suspendedOwner, { kind: 'role', role: 'member' })).toBe(false);
    expect(removesActiveOwner(admin, { kind: 'suspend' })).toBe(false);
  });
});
