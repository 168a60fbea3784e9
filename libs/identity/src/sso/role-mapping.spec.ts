import { describe, expect, it } from 'vitest';
import { compileRolePattern, mapRole } from './role-mapping.js';

describe('mapRole', () => {
  const rules = [
    { pattern: '^gov-admins$', role: 'admin' as const },
    { pattern: 'auditors', role: 'viewer' as const },
    { pattern: '.*', role: 'member' as const },
  ];

  it('takes the first rule that matches any group, in rule order', () => {
    expect(mapRole(rules, ['staff', 'gov-admins'])).toBe('admin');
    expect(mapRole(rules, ['external-auditors', 'gov-admins'])).toBe('admin');
    expect(mapRole(rules, ['external-auditors'])).toBe('viewer');
    expect(mapRole(rules, ['anything'])).toBe('member');
  });

  it('does not match group names longer than 256 characters (bounded work per login)', () => {
    expect(mapRole([{ pattern: 'admins', role: 'admin' }], ['x'.repeat(251) + 'admins'])).toBe('member');
    expect(mapRole([{ pattern: 'admins', role: 'admin' }], ['x'.repeat(250) + 'admins'])).toBe('admin');
  });

  it('defaults to member without groups or without a matching rule, and is case-sensitive', () => {
    expect(mapRole(rules.slice(0, 2), [])).toBe('member');
    expect(mapRole(rules.slice(0, 2), ['GOV-ADMINS'])).toBe('member');
  });

  it('answers for a pattern that would backtrack for ever in a backtracking engine', () => {
    expect(mapRole([{ pattern: '(a+)+!$', role: 'admin' }], ['a'.repeat(255) + '!'])).toBe('admin');
    expect(mapRole([{ pattern: '^(a+)+$', role: 'admin' }], ['a'.repeat(255) + '!'])).toBe('member');
  });
});

describe('compileRolePattern', () => {
  it('refuses empty, too long, invalid and non-RE2 patterns with a reason', () => {
    expect(compileRolePattern('')).toMatch(/empty/);
    expect(compileRolePattern('a'.repeat(257))).toMatch(/256/);
    expect(compileRolePattern('(a')).toMatch(/invalid RE2 pattern/);
    expect(compileRolePattern('(a)\\1')).toMatch(/invalid RE2 pattern/);
    expect(compileRolePattern('(?:a?){1000}a{1000}')).toMatch(/complex|invalid/);
    expect(typeof compileRolePattern('a'.repeat(256))).toBe('object');
  });
});
