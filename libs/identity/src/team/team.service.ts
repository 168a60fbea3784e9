import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  type DeletedDto,
  isObjectId,
  type Page,
  type PaginationQueryDto,
  pageRequest,
  Permission,
  type RequestMeta,
  type Role,
  toPage,
  TransactionHost,
} from '#platform';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { AccessRevocations } from '../sessions/access-revocations.js';
import { type ChangeRoleDto, type TeamMemberDto, toTeamMemberResponse } from './dto/team-member.dto.js';
import { lastActiveOwner, onlyOwnerTouchesOwners } from './team.errors.js';
import { type MemberView, MembersRepository } from '../organizations/members.repository.js';

/** The member list is bounded: default 100 per page, at most 200. */
export const MEMBER_LIST_PAGE = { limit: 100, max: 200 };

/** What a mutation does to the target membership; the checks below are computed from it. */
export type MembershipChange =
  { kind: 'role'; role: Role } | { kind: 'suspend' } | { kind: 'reactivate' } | { kind: 'remove' };

/** Whether the change concerns the owner role: granting it, or changing (suspending, removing) an owner. */
export function touchesOwner(target: Pick<MemberView, 'role'>, change: MembershipChange): boolean {
  return target.role === 'owner' || (change.kind === 'role' && change.role === 'owner');
}

/** Whether the target stops being an active owner: the change then needs another active owner to remain. */
export function removesActiveOwner(
  target: Pick<MemberView, 'role' | 'isActive'>,
  change: MembershipChange,
): boolean {
  if (target.role !== 'owner' || !target.isActive) return false;
  if (change.kind === 'role') return change.role !== 'owner';
  return change.kind === 'suspend' || change.kind === 'remove';
}

/**
 * Team members: role changes, suspension, reactivation and removal. Every mutation locks the organization row
 * first, so that the last-active-owner check and the write are serialised per organization, and writes its audit
 * entry in the same transaction.
 */
@Injectable()
export class TeamService {
  constructor(
    private readonly team: MembersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly revocations: AccessRevocations,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  async list(actor: Actor, query: PaginationQueryDto): Promise<Page<TeamMemberDto>> {
    const page = pageRequest(query, MEMBER_LIST_PAGE);
    const { rows, total } = await this.team.list(actor.organizationId, page);
    return toPage(rows.map(toTeamMemberResponse), total, page);
  }

  changeRole(actor: Actor, userId: string, dto: ChangeRoleDto, meta: RequestMeta): Promise<TeamMemberDto> {
    return this.mutate(actor, userId, { kind: 'role', role: dto.role }, async (target, now) => {
      if (target.role === dto.role) return toTeamMemberResponse(target);
      await this.team.updateRole(actor.organizationId, userId, dto.role, now);
      await this.revocations.announce(userId, actor.organizationId);
      await this.audit.record(
        actor,
        'team.member.role_changed',
        { type: 'user', id: target.userId },
        { ...{ from: target.role, to: dto.role }, email: target.email },
        meta,
      );
      return toTeamMemberResponse({ ...target, role: dto.role });
    });
  }

  /** Suspends the membership: the member's open JWTs get 401 ACCOUNT_DEACTIVATED and login skips it. */
  suspend(actor: Actor, userId: string, meta: RequestMeta): Promise<TeamMemberDto> {
    return this.mutate(actor, userId, { kind: 'suspend' }, async (target, now) => {
      if (!target.isActive) return toTeamMemberResponse(target);
      await this.team.setActive(actor.organizationId, userId, false, now);
      await this.revocations.announce(userId, actor.organizationId);
      await this.audit.record(
        actor,
        'team.member.suspended',
        { type: 'user', id: target.userId },
        { ...{ role: target.role }, email: target.email },
        meta,
      );
      return toTeamMemberResponse({ ...target, isActive: false });
    });
  }

  reactivate(actor: Actor, userId: string, meta: RequestMeta): Promise<TeamMemberDto> {
    return this.mutate(actor, userId, { kind: 'reactivate' }, async (target, now) => {
      if (target.isActive) return toTeamMemberResponse(target);
      await this.team.setActive(actor.organizationId, userId, true, now);
      await this.audit.record(
        actor,
        'team.member.reactivated',
        { type: 'user', id: target.userId },
        { ...{ role: target.role }, email: target.email },
        meta,
      );
      return toTeamMemberResponse({ ...target, isActive: true });
    });
  }

  /** Deletes the membership; the user account survives (and keeps its other organizations). */
  remove(actor: Actor, userId: string, meta: RequestMeta): Promise<DeletedDto> {
    return this.mutate(actor, userId, { kind: 'remove' }, async (target) => {
      await this.team.remove(actor.organizationId, userId);
      await this.revocations.announce(userId, actor.organizationId);
      await this.audit.record(
        actor,
        'team.member.removed',
        { type: 'user', id: target.userId },
        { ...{ role: target.role, wasActive: target.isActive }, email: target.email },
        meta,
      );
      return { id: userId, deleted: true };
    });
  }

  /**
   * The checks every member mutation shares, in order: the member exists in the caller's organization (404); only
   * an owner touches owners, by the role the request was authorised with (403); an active owner remains (400);
   * and, under the lock, the caller still holds a role that allows the change (403), which closes the window in
   * which a concurrently demoted or suspended owner could still act.
   */
  private mutate<T>(
    actor: Actor,
    userId: string,
    change: MembershipChange,
    apply: (target: MemberView, now: Date) => Promise<T>,
  ): Promise<T> {
    if (!isObjectId(userId)) return Promise.reject(AppError.notFound('Member'));
    return this.tx.run(async () => {
      const organization = await this.organizations.findByIdForUpdate(actor.organizationId);
      if (!organization) throw AppError.notFound('Organization');
      const target = await this.team.findMember(actor.organizationId, userId);
      if (!target) throw AppError.notFound('Member');
      const ownerOnly = touchesOwner(target, change);
      if (ownerOnly && actor.role !== 'owner') throw onlyOwnerTouchesOwners();
      if (
        removesActiveOwner(target, change) &&
        (await this.team.countActiveOwners(actor.organizationId)) <= 1
      ) {
        throw lastActiveOwner();
      }
      const caller = await this.team.findMember(actor.organizationId, actor.userId!);
      const allowed: readonly Role[] = ownerOnly ? ['owner'] : Permission.manageTeam;
      if (!caller?.isActive || !allowed.includes(caller.role)) {
        throw ownerOnly ? onlyOwnerTouchesOwners() : AppError.forbidden();
      }
      return apply(target, this.clock.now());
    });
  }
}
