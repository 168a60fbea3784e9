import { Inject, Injectable } from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  AuditLog,
  Clock,
  newId,
  type RequestMeta,
  type Role,
  scimError,
  TransactionHost,
} from '#platform';
import { MembersRepository } from '../organizations/members.repository.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { UsersRepository } from '../users/users.repository.js';
import { GROUPS_MAX, mapRole, type RoleMappingRule } from '../sso/role-mapping.js';
import { listResponse } from './scim-discovery.js';
import { compileScimFilter, parseScimFilter } from './scim-filter/index.js';
import {
  applyObject,
  displayNameOf,
  patchOperations,
  patchUser,
  type UserDraft,
  unwrap,
  userNameOf,
} from './scim-patch.js';
import { filterWork, listRequestOf, project, queryText, toScimUser } from './scim-resources.js';
import type { ScimPrincipal } from './scim-tokens.service.js';
import { type ScimUserRecord, ScimUsersRepository } from './scim-users.repository.js';
import type { ScimEmail, ScimIdentityRow } from './scim.schema.js';
import { AccessRevocations } from '../sessions/access-revocations.js';

export interface ListQuery {
  filter?: unknown;
  startIndex?: unknown;
  count?: unknown;
  attributes?: unknown;
  excludedAttributes?: unknown;
}

/** A 404 without scimType: a user that is not a member of the token's organization. */
const noUser = () => scimError(404, undefined, 'User not found');

/** Postgres' unique violation: a concurrent write took the e-mail address between the check and the write. */
const isUniqueViolation = (err: unknown): boolean =>
  (err as { code?: string })?.code === '23505' ||
  (err as { cause?: { code?: string } })?.cause?.code === '23505';

/**
 * SCIM Users (RFC 7644): the token's organization's members. POST provisions an account and its
 * membership atomically (role from the body's groups and the mapping rules); PUT replaces; PATCH applies every
 * operation to a draft first, then writes it in one transaction; DELETE and `active: false` deactivate the
 * membership (sign-in and open sessions refused, as a suspension), `active: true` restores it.
 * See docs/identity-administrators.md, "SCIM provisioning"; test/scim-users*.e2e-spec.ts, test/scim-filtering, the
 * dialects (test/scim-entra-*, test/scim-okta, test/scim-idp-cycles), test/scim-emails and test/scim-names.
 */
@Injectable()
export class ScimUsersService {
  constructor(
    private readonly repository: ScimUsersRepository,
    private readonly users: UsersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly members: MembersRepository,
    private readonly revocations: AccessRevocations,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'publicUrl'>,
  ) {}

  get base(): string {
    return `${this.config.publicUrl}/scim/v2`;
  }

  async list(principal: ScimPrincipal, query: ListQuery): Promise<Record<string, unknown>> {
    const { startIndex, count, filter } = listRequestOf(query as Record<string, unknown>);
    let where;
    if (filter !== undefined) {
      where = filterWork(() =>
        compileScimFilter(parseScimFilter(filter), this.repository.attributes(principal.organizationId)),
      );
    }
    const { rows, total } = await this.repository.list(
      principal.organizationId,
      where,
      startIndex - 1,
      count,
    );
    const resources = rows.map((r) =>
      project(
        toScimUser(r, this.base),
        queryText(query.attributes, 'attributes'),
        queryText(query.excludedAttributes, 'excludedAttributes'),
      ),
    );
    return listResponse(resources, total, startIndex);
  }

  async get(principal: ScimPrincipal, userId: string, query: ListQuery): Promise<Record<string, unknown>> {
    const record = await this.find(principal, userId);
    return project(
      toScimUser(record, this.base),
      queryText(query.attributes, 'attributes'),
      queryText(query.excludedAttributes, 'excludedAttributes'),
    );
  }

  async create(principal: ScimPrincipal, body: unknown, meta: RequestMeta): Promise<Record<string, unknown>> {
    const object = this.object(body);
    const userName = userNameOf(
      object.userName ?? object.username ?? primaryEmail(object.emails) ?? undefined,
    );
    const draft: UserDraft = {
      userName,
      displayName: null,
      givenName: null,
      familyName: null,
      externalId: null,
      active: true,
      emails: null,
    };
    applyObject(draft, { ...object, userName }, true);
    const groups = groupNames(object);
    const rules = await this.rules(principal.organizationId);
    const role: Role = mapRole(rules, groups);
    const userId = await this.tx.run(async () => {
      const now = this.clock.now();
      const user = await this.users.insertIfEmailFree({
        id: newId(now.getTime()),
        email: draft.userName,
        name: displayNameOf(draft),
        passwordHash: null,
        // The organization's own account; its address is the IdP's word, not a proof of the mailbox.
        originOrganizationId: principal.organizationId,
        createdAt: now,
        updatedAt: now,
      });
      // The address belongs to an account already (here or elsewhere): a new account cannot take it.
      if (!user) throw scimError(409, 'uniqueness', `userName ${draft.userName} is already taken`);
      await this.organizations.insertMembership({
        id: newId(now.getTime()),
        organizationId: principal.organizationId,
        userId: user.id,
        role,
        isActive: draft.active,
        deactivatedBy: draft.active ? null : 'scim',
        createdAt: now,
        updatedAt: now,
      });
      await this.repository.upsertIdentity(identityOf(principal.organizationId, user.id, draft, now));
      await this.audit.record(
        this.actor(principal),
        'scim.user.created',
        { type: 'user', id: user.id },
        {
          tokenId: principal.tokenId,
          externalId: draft.externalId,
          userName: draft.userName,
          active: draft.active,
          roleDecision: {
            role,
            groups: groups.slice(0, 20),
            rules: rules.length,
            default: role === 'member',
          },
        },
        meta,
      );
      return user.id;
    });
    return toScimUser(await this.find(principal, userId), this.base);
  }

  async replace(
    principal: ScimPrincipal,
    userId: string,
    body: unknown,
    meta: RequestMeta,
  ): Promise<Record<string, unknown>> {
    const object = this.object(body);
    const current = await this.find(principal, userId);
    const userName = userNameOf(
      object.userName ?? object.username ?? primaryEmail(object.emails) ?? undefined,
    );
    const draft = draftOf(current);
    applyObject(draft, { ...object, userName }, true);
    await this.write(principal, current, draft, 'put', meta);
    return toScimUser(await this.find(principal, userId), this.base);
  }

  async patch(
    principal: ScimPrincipal,
    userId: string,
    body: unknown,
    meta: RequestMeta,
  ): Promise<Record<string, unknown>> {
    const operations = patchOperations(body);
    const current = await this.find(principal, userId);
    const draft = draftOf(current);
    patchUser(draft, operations);
    await this.write(principal, current, draft, 'patch', meta);
    return toScimUser(await this.find(principal, userId), this.base);
  }

  async deactivate(principal: ScimPrincipal, userId: string, meta: RequestMeta): Promise<void> {
    const current = await this.find(principal, userId);
    await this.write(principal, current, { ...draftOf(current), active: false }, 'delete', meta);
  }

  /** Writes a draft over the member in one transaction, with the audit entries of what changed. */
  private async write(
    principal: ScimPrincipal,
    current: ScimUserRecord,
    draft: UserDraft,
    via: 'put' | 'patch' | 'delete',
    meta: RequestMeta,
  ): Promise<void> {
    const organizationId = principal.organizationId;
    const name = displayNameOf(draft);
    const changed = [
      draft.userName !== current.email && 'userName',
      draft.displayName !== current.displayName && 'displayName',
      draft.givenName !== current.givenName && 'name.givenName',
      draft.familyName !== current.familyName && 'name.familyName',
      draft.externalId !== current.externalId && 'externalId',
      !sameEmails(draft.emails, current.emails) && 'emails',
    ].filter((c): c is string => typeof c === 'string');
    const activeChanged = draft.active !== current.active;
    try {
      await this.tx.run(async () => {
        const now = this.clock.now();
        // The account's row before the audit chain, the order every login and profile change takes. Only the
        // organization's own account, which no other organization shares, is renamed or readdressed.
        const own = await this.ownsAccount(organizationId, current.userId);
        if (draft.userName !== current.email)
          await this.changeEmail(own, current.userId, draft.userName, now);
        if (own && name !== current.name) await this.users.updateSelf(current.userId, { name }, now);
        await this.audit.lockOrganization(organizationId);
        if (activeChanged) {
          if (!draft.active && current.role === 'owner' && current.active) {
            if ((await this.members.countActiveOwners(organizationId)) <= 1) {
              throw scimError(400, 'invalidValue', 'The organization must keep an active owner');
            }
          }
          await this.members.setActive(organizationId, current.userId, draft.active, now, 'scim');
          // Its open streams close on every replica; its sessions read only from now on
          // (test/deprovisioning.e2e-spec.ts).
          if (!draft.active) await this.revocations.announce(current.userId, organizationId);
        }
        await this.repository.upsertIdentity(identityOf(organizationId, current.userId, draft, now));
        const base = { tokenId: principal.tokenId, externalId: draft.externalId, via };
        if (changed.length > 0) {
          await this.audit.record(
            this.actor(principal),
            'scim.user.updated',
            { type: 'user', id: current.userId },
            { ...base, changed },
            meta,
          );
        }
        if (activeChanged) {
          await this.audit.record(
            this.actor(principal),
            draft.active ? 'scim.user.reactivated' : 'scim.user.deactivated',
            { type: 'user', id: current.userId },
            base,
            meta,
          );
        }
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw scimError(409, 'uniqueness', `userName ${draft.userName} is already taken`);
      throw err;
    }
  }

  /**
   * Whether the account is the organization's own: its SSO or SCIM created it, and no other organization shares
   * it. Only such an account's name and sign-in address follow the IdP.
   */
  private async ownsAccount(organizationId: string, userId: string): Promise<boolean> {
    const account = await this.users.findById(userId);
    if (account?.originOrganizationId !== organizationId) return false;
    return (await this.organizations.membershipsOf(userId)).length === 1;
  }

  /**
   * A new sign-in address for the organization's own account, when free. Any other account's address is its
   * holder's: an IdP that renamed it could take over the mailbox's invitations elsewhere. The new address is
   * unproven until its mailbox answers.
   */
  private async changeEmail(own: boolean, userId: string, email: string, now: Date): Promise<void> {
    if (!own) {
      throw scimError(
        400,
        'invalidValue',
        'This account was not created by this organization’s identity provider, or other organizations share ' +
          'it: its sign-in address is its holder’s to change',
      );
    }
    if (!(await this.users.changeEmailIfFree(userId, email, now))) {
      throw scimError(409, 'uniqueness', `userName ${email} is already taken`);
    }
  }

  private async find(principal: ScimPrincipal, userId: string): Promise<ScimUserRecord> {
    if (!/^[0-9a-f]{24}$/.test(userId)) throw noUser();
    const record = await this.repository.find(principal.organizationId, userId);
    if (!record) throw noUser();
    return record;
  }

  private async rules(organizationId: string): Promise<RoleMappingRule[]> {
    const fields = await this.organizations.ssoFields(organizationId);
    return (fields?.roleMappingRules ?? []) as RoleMappingRule[];
  }

  private object(body: unknown): Record<string, unknown> {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw scimError(400, 'invalidSyntax', 'The body must be a SCIM User object');
    }
    return body as Record<string, unknown>;
  }

  private actor(principal: ScimPrincipal) {
    return {
      organizationId: principal.organizationId,
      actor: { type: 'scim' as const, id: principal.tokenId, email: null },
    };
  }
}

function draftOf(r: ScimUserRecord): UserDraft {
  return {
    userName: r.email,
    displayName: r.displayName,
    givenName: r.givenName,
    familyName: r.familyName,
    externalId: r.externalId,
    active: r.active,
    emails: r.emails,
  };
}

/** Whether two `emails` lists say the same, entry by entry (jsonb gives the stored ones back in its key order). */
function sameEmails(a: ScimEmail[] | null, b: ScimEmail[] | null): boolean {
  if (a === null || b === null) return a === b;
  const same = (x: ScimEmail, y: ScimEmail) =>
    x.value === y.value && x.type === y.type && x.primary === y.primary && x.display === y.display;
  return a.length === b.length && a.every((entry, i) => same(entry, b[i]!));
}

/** What the organization's IdP said of the member, as its `scim_identities` row. */
function identityOf(organizationId: string, userId: string, draft: UserDraft, now: Date): ScimIdentityRow {
  return {
    organizationId,
    userId,
    externalId: draft.externalId,
    givenName: draft.givenName,
    familyName: draft.familyName,
    displayName: draft.displayName,
    emails: draft.emails,
    createdAt: now,
    updatedAt: now,
  };
}

/** The primary (else the first) address of an `emails` list, when the body has no userName. */
function primaryEmail(emails: unknown): string | undefined {
  if (!Array.isArray(emails)) return undefined;
  const entries = emails.filter((e): e is Record<string, unknown> => !!e && typeof e === 'object');
  const chosen = entries.find((e) => e.primary === true || e.primary === 'true') ?? entries[0];
  const value = chosen ? unwrap(chosen) : undefined;
  return typeof value === 'string' ? value : undefined;
}

/**
 * The IdP's group names in a POST body: `groups[].display|value` and `roles[].value`
 * (docs/identity-administrators.md, "SCIM provisioning").
 */
function groupNames(body: Record<string, unknown>): string[] {
  const names: string[] = [];
  for (const key of ['groups', 'roles']) {
    const list = body[key];
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      if (typeof entry === 'string') names.push(entry);
      else if (entry && typeof entry === 'object') {
        const { display, value } = entry as Record<string, unknown>;
        if (key === 'groups' && typeof display === 'string') names.push(display);
        if (typeof value === 'string') names.push(value);
      }
    }
  }
  return names.filter((n) => n.length <= 256).slice(0, GROUPS_MAX);
}
