import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AppError,
  AuditLog,
  Clock,
  type Page,
  type PaginationQueryDto,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { LoginEventsRepository } from '../sessions/login-events.repository.js';
import { toUserResponse, type UserDto } from '../users/user.mapper.js';
import type { UserRow } from '../users/user.schema.js';
import { type UserSelfPatch, UsersRepository } from '../users/users.repository.js';
import {
  type LoginActivityDto,
  toLoginActivityResponse,
  toUserOrganizationResponse,
  type UpdateProfileDto,
  type UserOrganizationDto,
} from './dto/profile.dto.js';
import { canonicalLocale, normaliseTimeZone } from './intl-validation.js';
import { mergePreferences, type Preferences } from './preferences-merge.js';

export const LOGIN_ACTIVITY_PAGE = { limit: 20, max: 100 };

function userIdOf(actor: Actor): string {
  if (!actor.userId) throw AppError.unauthorized();
  return actor.userId;
}

/** The caller's own profile, organizations, preferences and login activity. */
@Injectable()
export class ProfileService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly users: UsersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly loginEvents: LoginEventsRepository,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  async organizationsOf(actor: Actor): Promise<UserOrganizationDto[]> {
    const rows = await this.organizations.activeOrganizationsOf(userIdOf(actor));
    // A session that an organization's SSO opened for an account it did not create shows that organization only:
    // whoever runs its IdP learns nothing of the person's other organizations.
    const visible = actor.ssoScoped ? rows.filter((r) => r.organizationId === actor.organizationId) : rows;
    return visible.map(toUserOrganizationResponse);
  }

  /**
   * Updates name, locale (stored in canonical BCP 47 form) and time zone. Fields left out stay; a request
   * that changes nothing writes nothing. Writes `user.profile_updated` with the changed fields.
   */
  updateProfile(actor: Actor, dto: UpdateProfileDto, meta: RequestMeta): Promise<UserDto> {
    const userId = userIdOf(actor);
    return this.tx.run(async () => {
      const before = await this.requireUser(userId, true);
      const wanted: UserSelfPatch = {
        name: dto.name,
        locale: dto.locale === undefined ? undefined : canonicalLocale(dto.locale),
        timezone: dto.timezone === undefined ? undefined : normaliseTimeZone(dto.timezone),
      };
      const patch: UserSelfPatch = {};
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      for (const field of ['name', 'locale', 'timezone'] as const) {
        const to = wanted[field];
        if (to === undefined || to === before[field]) continue;
        patch[field] = to;
        changes[field] = { from: before[field], to };
      }
      if (Object.keys(changes).length === 0) return toUserResponse(before);
      const after = (await this.users.updateSelf(userId, patch, this.clock.now()))!;
      await this.audit.record(actor, 'user.profile_updated', { type: 'user', id: userId }, { changes }, meta);
      return toUserResponse(after);
    });
  }

  async preferences(actor: Actor): Promise<Preferences> {
    return (await this.requireUser(userIdOf(actor))).preferences;
  }

  /**
   * Merges a JSON Merge Patch (RFC 7396) into the stored preferences under a row lock, so concurrent patches
   * of different members both survive. Writes `user.preferences_updated` naming the top-level members touched
   * (not their values).
   */
  updatePreferences(actor: Actor, patch: unknown, meta: RequestMeta): Promise<Preferences> {
    const userId = userIdOf(actor);
    return this.tx.run(async () => {
      const user = await this.requireUser(userId, true);
      const merged = mergePreferences(user.preferences, patch);
      const keys = Object.keys(patch as Preferences);
      if (keys.length === 0) return user.preferences;
      await this.users.updateSelf(userId, { preferences: merged }, this.clock.now());
      await this.audit.record(
        actor,
        'user.preferences_updated',
        { type: 'user', id: userId },
        { keys: keys.slice(0, 50) },
        meta,
      );
      return merged;
    });
  }

  async loginActivity(actor: Actor, query: PaginationQueryDto): Promise<Page<LoginActivityDto>> {
    const page = pageRequest(query, LOGIN_ACTIVITY_PAGE);
    // A session that an organization's SSO opened for an account it did not create sees that organization's only.
    const { rows, total } = await this.loginEvents.listForUser(
      userIdOf(actor),
      page,
      actor.ssoScoped ? actor.organizationId : undefined,
    );
    return toPage(rows.map(toLoginActivityResponse), total, page);
  }

  private async requireUser(userId: string, forUpdate = false): Promise<UserRow> {
    const user = forUpdate ? await this.users.findByIdForUpdate(userId) : await this.users.findById(userId);
    if (!user) throw AppError.unauthorized();
    return user;
  }
}
