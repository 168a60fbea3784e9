import { RE2JS } from 're2js';
import type { Role } from '#platform';

/** A rule of the role mapping: the first rule whose pattern matches one of the user's groups gives the role. */
export interface RoleMappingRule {
  pattern: string;
  role: MappableRole;
}

/** Roles an identity provider's groups may grant. Ownership is never handed out by a directory group. */
export type MappableRole = Exclude<Role, 'owner'>;
export const MAPPABLE_ROLES: readonly MappableRole[] = ['admin', 'member', 'viewer'];
export const ROLE_PATTERN_MAX = 256;
/** RE2 runs in linear time, with a constant that grows with the compiled program: bounded as for policies. */
const PROGRAM_SIZE_MAX = 1000;
export const ROLE_RULES_MAX = 50;
/** Groups considered per login; a directory may send thousands. */
export const GROUPS_MAX = 500;
/** A group name longer than this is not matched (directory group names are short). */
export const GROUP_NAME_MAX = 256;
export const DEFAULT_SSO_ROLE: MappableRole = 'member';

/** Compiles a rule's pattern (RE2 semantics, case-sensitive, matched anywhere in a group name); or why not. */
export function compileRolePattern(pattern: string): RE2JS | string {
  if (pattern.length === 0) return 'pattern must not be empty';
  if (pattern.length > ROLE_PATTERN_MAX) return `pattern must be at most ${ROLE_PATTERN_MAX} characters`;
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    return `invalid RE2 pattern: ${err instanceof Error ? err.message : String(err)}`;
  }
  if (re.programSize() > PROGRAM_SIZE_MAX) return 'pattern is too complex (reduce repetition counts)';
  return re;
}

/**
 * The role an SSO login provisions: the first rule, in order, whose pattern matches any of the
 * user's groups; `member` when none does. Patterns run in linear time (RE2), so a group name cannot stall it.
 * See docs/identity-administrators.md, "Proving a domain by DNS" (its role-mapping rules);
 * libs/identity/src/sso/role-mapping.spec.ts.
 */
export function mapRole(rules: readonly RoleMappingRule[], groups: readonly string[]): MappableRole {
  // Bounded work whatever the IdP sends: at most GROUPS_MAX groups of at most GROUP_NAME_MAX characters.
  const names = groups
    .slice(0, GROUPS_MAX)
    .filter((g) => typeof g === 'string' && g.length <= GROUP_NAME_MAX);
  for (const rule of rules) {
    const re = compileRolePattern(rule.pattern);
    if (typeof re === 'string') continue;
    if (names.some((group) => re.matcher(group).find())) return rule.role;
  }
  return DEFAULT_SSO_ROLE;
}
