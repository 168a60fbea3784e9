import { Inject, Injectable } from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  AuditLog,
  Clock,
  type RequestMeta,
  scimError,
  TransactionHost,
} from '#platform';
import { MembersRepository } from '../organizations/members.repository.js';
import { listResponse, SCHEMA } from './scim-discovery.js';
import { matchesScimFilter, parseScimFilter } from './scim-filter/index.js';
import { patchOperations } from './scim-patch.js';
import {
  type Bucket,
  BUCKETS,
  filterWork,
  listRequestOf,
  project,
  queryText,
  roleOf,
} from './scim-resources.js';
import type { ScimPrincipal } from './scim-tokens.service.js';
import type { ListQuery } from './scim-users.service.js';
import { type ScimUserRecord, ScimUsersRepository } from './scim-users.repository.js';
import { AccessRevocations } from '../sessions/access-revocations.js';

/** Members a group shows at most (a role bucket of a large organization; `excludedAttributes=members` skips them). */
export const GROUP_MEMBERS_MAX = 1000;
/** Members one PATCH may name at most. */
const PATCH_MEMBERS_MAX = 1000;
/** A bucket other than `member` changed by PATCH holds at most this many members. */
const BUCKET_PATCH_MAX = 10_000;

const noGroup = () => scimError(404, undefined, 'Group not found');
const OBJECT_ID = /^[0-9a-f]{24}$/;

/** The user ids an operation's value names: `[{value}]`, `{value}`, `{members: [...]}` or bare ids. */
function memberIds(value: unknown): string[] {
  let v = value;
  if (
    v &&
    typeof v === 'object' &&
    !Array.isArray(v) &&
    Array.isArray((v as Record<string, unknown>).members)
  ) {
    v = (v as Record<string, unknown>).members;
  }
  const list = Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
  if (list.length > PATCH_MEMBERS_MAX) {
    throw scimError(400, 'invalidValue', `At most ${PATCH_MEMBERS_MAX} members per operation`);
  }
  return list.map((entry) => {
    const id = entry && typeof entry === 'object' ? (entry as Record<string, unknown>).value : entry;
    if (typeof id !== 'string')
      throw scimError(400, 'invalidValue', 'A member is named by its value (user id)');
    return id;
  });
}

/** A path like `members[value eq "<id>"]` as a test of a member id (the filter is evaluated, not guessed at). */
function memberFilter(path: string): (userId: string) => boolean {
  const open = path.indexOf('[');
  if (!path.trimEnd().endsWith(']'))
    throw scimError(400, 'invalidValue', `Unsupported path: ${path.slice(0, 100)}`);
  const node = filterWork(() => parseScimFilter(path.slice(open + 1, path.lastIndexOf(']'))));
  return (userId) =>
    filterWork(() =>
      matchesScimFilter(node, (p) => (p === 'value' || p === 'members.value' ? userId : undefined)),
    );
}

/**
 * SCIM Groups: the four fixed role buckets `owner`, `admin`, `member`, `reviewer` (the viewer role).
 * A group's members are the organization's members with that role. PATCH adds members (they get the role), removes
 * them (they become `member`), or replaces the list; all-or-nothing, and the organization keeps an active owner.
 * See docs/identity-administrators.md, "SCIM provisioning"; test/scim-groups.e2e-spec.ts.
 */
@Injectable()
export class ScimGroupsService {
  constructor(
    private readonly repository: ScimUsersRepository,
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
    const node = filter !== undefined ? filterWork(() => parseScimFilter(filter)) : undefined;
    const groups = [];
    for (const bucket of BUCKETS) {
      const members = await this.membersOf(principal, bucket);
      if (node) {
        const values: Record<string, unknown> = {
          id: bucket,
          displayname: bucket,
          members: members.map((m) => m.userId),
          'members.value': members.map((m) => m.userId),
          'members.display': members.map((m) => m.email),
        };
        if (!filterWork(() => matchesScimFilter(node, (path) => values[path]))) continue;
      }
      groups.push(this.resource(bucket, members));
    }
    const page = groups.slice(startIndex - 1, startIndex - 1 + count);
    return listResponse(
      page.map((g) =>
        project(
          g,
          queryText(query.attributes, 'attributes'),
          queryText(query.excludedAttributes, 'excludedAttributes'),
        ),
      ),
      groups.length,
      startIndex,
    );
  }

  async get(principal: ScimPrincipal, id: string, query: ListQuery): Promise<Record<string, unknown>> {
    const bucket = this.bucket(id);
    const group = this.resource(bucket, await this.membersOf(principal, bucket));
    return project(
      group,
      queryText(query.attributes, 'attributes'),
      queryText(query.excludedAttributes, 'excludedAttributes'),
    );
  }

  async patch(principal: ScimPrincipal, id: string, body: unknown, meta: RequestMeta): Promise<void> {
    const bucket = this.bucket(id);
    const operations = patchOperations(body);
    const organizationId = principal.organizationId;
    // Removing from `member` changes nothing (its members become… members), so only the other buckets need their
    // current members, which are few.
    const current =
      bucket === 'member'
        ? []
        : (await this.membersOf(principal, bucket, BUCKET_PATCH_MAX + 1)).map((m) => m.userId);
    if (current.length > BUCKET_PATCH_MAX) {
      throw scimError(400, 'invalidValue', `The ${bucket} group is too large to change here`);
    }
    // The bucket's members after every operation, worked out before anything is written (all-or-nothing).
    const inBucket = new Set(current);
    const named = new Set<string>();
    for (const operation of operations) {
      const path = operation.path?.trim().toLowerCase() ?? null;
      if (path !== null && path !== 'members' && !path.startsWith('members[')) {
        if (path === 'displayname' || path === 'id') {
          throw scimError(400, 'mutability', 'The role buckets’ names are fixed');
        }
        throw scimError(400, 'invalidValue', `Unknown attribute path: ${path.slice(0, 100)}`);
      }
      if (path === null) {
        // A whole-group value: `members` changes, `id` and `displayName` may only repeat the bucket's own (Okta
        // sends them with every push); anything else is ignored.
        const value = operation.value;
        if (!value || typeof value !== 'object' || Array.isArray(value)) {
          throw scimError(400, 'invalidValue', 'An operation without path takes an object value');
        }
        const entries = Object.entries(value as Record<string, unknown>);
        for (const [key, v] of entries) {
          const k = key.toLowerCase();
          if ((k === 'displayname' || k === 'id') && (typeof v !== 'string' || v.toLowerCase() !== bucket)) {
            throw scimError(400, 'mutability', 'The role buckets’ names are fixed');
          }
        }
        if (!entries.some(([key]) => key.toLowerCase() === 'members')) continue;
      }
      if (path?.startsWith('members[')) {
        if (operation.op !== 'remove') {
          throw scimError(400, 'invalidValue', 'A filtered members path is for remove only');
        }
        const match = memberFilter(operation.path!);
        for (const userId of [...inBucket]) if (match(userId)) inBucket.delete(userId);
        continue;
      }
      const ids = memberIds(operation.value);
      ids.forEach((u) => named.add(u));
      if (operation.op === 'add') ids.forEach((u) => inBucket.add(u));
      else if (operation.op === 'remove') {
        if (operation.value === undefined) inBucket.clear();
        else ids.forEach((u) => inBucket.delete(u));
      } else {
        inBucket.clear();
        ids.forEach((u) => inBucket.add(u));
      }
    }
    const roles = await this.repository.rolesOf(
      organizationId,
      [...named].filter((u) => OBJECT_ID.test(u)),
    );
    for (const userId of named) {
      if (!roles.has(userId)) {
        throw scimError(400, 'invalidValue', `No member with id ${userId.slice(0, 40)} in this organization`);
      }
    }
    const role = roleOf(bucket);
    const added = [...inBucket].filter((u) => !current.includes(u) && roles.get(u) !== role);
    const removed = current.filter((u) => !inBucket.has(u));
    if (added.length === 0 && removed.length === 0) return;
    await this.tx.run(async () => {
      const now = this.clock.now();
      await this.audit.lockOrganization(organizationId);
      for (const userId of added) await this.members.updateRole(organizationId, userId, role, now);
      for (const userId of removed) await this.members.updateRole(organizationId, userId, 'member', now);
      if ((await this.members.countActiveOwners(organizationId)) < 1) {
        throw scimError(400, 'invalidValue', 'The organization must keep an active owner');
      }
      // A changed role ends the member's open streams: they reconnect under the new role.
      for (const userId of [...added, ...removed]) await this.revocations.announce(userId, organizationId);
      await this.audit.record(
        { organizationId, actor: { type: 'scim', id: principal.tokenId, email: null } },
        'scim.group.updated',
        { type: 'group', id: bucket },
        { tokenId: principal.tokenId, added: added.slice(0, 100), removed: removed.slice(0, 100) },
        meta,
      );
    });
  }

  private bucket(id: string): Bucket {
    const bucket = BUCKETS.find((b) => b === id.toLowerCase());
    if (!bucket) throw noGroup();
    return bucket;
  }

  private async membersOf(
    principal: ScimPrincipal,
    bucket: Bucket,
    limit = GROUP_MEMBERS_MAX,
  ): Promise<ScimUserRecord[]> {
    return this.repository.withRole(principal.organizationId, roleOf(bucket), limit);
  }

  private resource(bucket: Bucket, members: ScimUserRecord[]): Record<string, unknown> {
    return {
      schemas: [SCHEMA.group],
      id: bucket,
      displayName: bucket,
      members: members.map((m) => ({
        value: m.userId,
        display: m.email,
        type: 'User',
        $ref: `${this.base}/Users/${m.userId}`,
      })),
      meta: { resourceType: 'Group', location: `${this.base}/Groups/${bucket}` },
    };
  }
}
