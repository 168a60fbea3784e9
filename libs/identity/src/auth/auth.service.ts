import { Inject, Injectable } from '@nestjs/common';
import {
  type Actor,
  APP_CONFIG,
  type AppConfig,
  AppError,
  Clock,
  ErrorCode,
  newId,
  PLAN_FEATURES,
  type RequestMeta,
  TransactionHost,
} from '../../../platform/src/index.js';
import { AuditService } from '../../../governance/src/index.js';
import { toOrganizationResponse } from '../organizations/dto/organization.dto.js';
import { OrganizationsRepository } from '../organizations/organizations.repository.js';
import { SessionService } from '../sessions/session.service.js';
import { toUserResponse } from '../users/user.mapper.js';
import { UsersRepository } from '../users/users.repository.js';
import type {
  LoginDto,
  LoginResultDto,
  MeDto,
  MessageDto,
  RegisterDto,
  RegisterResultDto,
} from './dto/auth.dto.js';
import { hashPassword, verifyPassword } from './password.js';

@Injectable()
export class AuthService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tx: TransactionHost,
    private readonly users: UsersRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  /** Creates the user, an organization on the default plan, the owner membership and the first session at once. */
  async register(dto: RegisterDto, meta: RequestMeta): Promise<RegisterResultDto> {
    const passwordHash = await hashPassword(dto.password);
    return this.tx.run(async () => {
      const now = this.clock.now();
      const user = await this.users.insertIfEmailFree({
        id: newId(now.getTime()),
        email: dto.email,
        name: dto.name,
        passwordHash,
        passwordChangedAt: now,
        createdAt: now,
        updatedAt: now,
      });
      if (!user)
        throw AppError.conflict('An account with this e-mail address already exists', ErrorCode.EMAIL_IN_USE);
      const organization = await this.organizations.insert({
        id: newId(now.getTime()),
        name: dto.organizationName,
        plan: this.config.defaultPlan,
        createdAt: now,
        updatedAt: now,
      });
      await this.organizations.insertMembership({
        id: newId(now.getTime()),
        organizationId: organization.id,
        userId: user.id,
        role: 'owner',
        isActive: true,
        createdAt: now,
        updatedAt: now,
      });
      const entry = await this.audit.append({
        organizationId: organization.id,
        eventType: 'auth.register',
        actor: { type: 'user', id: user.id, email: user.email },
        targetType: 'user',
        targetId: user.id,
        metadata: { method: 'password', organizationName: organization.name },
        meta,
      });
      const session = await this.sessions.open({
        sessionId: entry.id,
        userId: user.id,
        organizationId: organization.id,
        role: 'owner',
        timeout: user.sessionTimeout,
        meta,
      });
      return {
        token: session.token,
        user: toUserResponse(user),
        organization: toOrganizationResponse(organization),
      };
    });
  }

  /**
   * Password login. A wrong e-mail and a wrong password give the same 401 body after the same argon2 work.
   * The session opens in the user's oldest active organization.
   */
  async login(dto: LoginDto, meta: RequestMeta): Promise<LoginResultDto> {
    const user = await this.users.findByEmail(dto.email);
    const valid = await verifyPassword(user?.passwordHash, dto.password);
    if (!user || !valid)
      throw AppError.unauthorized('Invalid e-mail or password', ErrorCode.INVALID_CREDENTIALS);
    const membership = user.isActive
      ? (await this.organizations.membershipsOf(user.id)).find((m) => m.isActive)
      : undefined;
    if (!membership)
      throw AppError.unauthorized('This account is deactivated', ErrorCode.ACCOUNT_DEACTIVATED);
    return this.tx.run(async () => {
      const entry = await this.audit.append({
        organizationId: membership.organizationId,
        eventType: 'auth.login',
        actor: { type: 'user', id: user.id, email: user.email },
        targetType: 'user',
        targetId: user.id,
        metadata: { method: 'password' },
        meta,
      });
      const session = await this.sessions.open({
        sessionId: entry.id,
        userId: user.id,
        organizationId: membership.organizationId,
        role: membership.role,
        timeout: user.sessionTimeout,
        meta,
      });
      await this.users.recordLogin(user.id, meta.ip, this.clock.now());
      return { token: session.token, user: toUserResponse(user) };
    });
  }

  async logout(actor: Actor, meta: RequestMeta): Promise<MessageDto> {
    await this.tx.run(async () => {
      await this.sessions.revokeCurrent(actor);
      await this.audit.append({
        organizationId: actor.organizationId,
        eventType: 'auth.logout',
        actor: { type: 'user', id: actor.userId, email: actor.email },
        targetType: 'user',
        targetId: actor.userId,
        meta,
      });
    });
    return { message: 'Logged out' };
  }

  async me(actor: Actor): Promise<MeDto> {
    const [user, organization] = await Promise.all([
      this.users.findById(actor.userId!),
      this.organizations.findById(actor.organizationId),
    ]);
    if (!user || !organization) throw AppError.unauthorized();
    return {
      user: toUserResponse(user),
      organization: {
        id: organization.id,
        name: organization.name,
        plan: organization.plan,
        features: [...PLAN_FEATURES[organization.plan]],
      },
      role: actor.role!,
    };
  }
}
