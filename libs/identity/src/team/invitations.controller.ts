import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  OptionalActor,
  DeletedDto,
  objectIdParam,
  type Page,
  PaginationQueryDto,
  Permission,
  Public,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import type { MfaChallengeDto } from '../auth/dto/auth.dto.js';
import {
  AcceptInvitationDto,
  type AcceptedInvitationDto,
  ApiAcceptResponse,
  CreateInvitationDto,
  InvitationDto,
  InviteValidationDto,
} from './dto/invitation.dto.js';
import { InvitationsService } from './invitations.service.js';

const ID_PARAM = objectIdParam('id', 'Invitation id');
const TOKEN_PARAM = { name: 'token', description: 'The token from the invitation e-mail link.' };
const NOT_FOUND = {
  404: 'NOT_FOUND (no pending invitation with this id in the caller’s organization: unknown, revoked or accepted)',
};
const ALREADY_MEMBER =
  'VALIDATION_ERROR (invalid body; with `reason: "ALREADY_MEMBER"` when the e-mail is a member or has a pending, ' +
  'unexpired invitation)';
const OWNER_INVITE = { 403: 'FORBIDDEN (role lacks permission; only an owner may invite an owner)' };

/** Invitations of the caller's organization, and the two public routes of the invitee. */
@ApiTags('Team')
@Controller('team')
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @Post('invite')
  @Access({ roles: Permission.manageTeam })
  @ApiOperation({
    summary: 'Invite someone by e-mail',
    description:
      'Owner or admin; only an owner may invite with role `owner`. Role defaults to `member`. The invitation ' +
      'expires 7 days after creation. The token is only e-mailed, as the link `APP_URL/invite/<token>`; the ' +
      'response never carries it. Writes `team.invite.created`.',
  })
  @ApiEnvelope(InvitationDto, { status: 201 })
  @ApiErrors([400, 401, 403], { 400: ALREADY_MEMBER, ...OWNER_INVITE })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateInvitationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<InvitationDto> {
    return this.invitations.create(actor, dto, meta);
  }

  @Get('invites')
  @Access({ roles: Permission.manageTeam })
  @ApiOperation({
    summary: 'List pending invitations',
    description:
      'Owner or admin. Pending invitations that have not expired, newest first. Paginated: limit default 50, ' +
      'max 100.',
  })
  @ApiEnvelope(InvitationDto, { paginated: true })
  @ApiErrors([400, 401, 403])
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<InvitationDto>> {
    return this.invitations.list(actor, query);
  }

  @Delete('invites/:id')
  @Access({ roles: Permission.manageTeam })
  @ApiOperation({
    summary: 'Revoke an invitation',
    description:
      'Owner or admin. The invitation is kept, revoked: validating its token answers `reason: "revoked"` and ' +
      'accepting it answers 404. Writes `team.invite.revoked`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(DeletedDto)
  @ApiErrors([401, 403, 404], NOT_FOUND)
  revoke(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.invitations.revoke(actor, id, meta);
  }

  @Post('invites/:id/resend')
  @Access({ roles: Permission.manageTeam })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Resend an invitation',
    description:
      'Owner or admin (an owner for an invitation with role `owner`). Mails the same token again and resets the ' +
      'expiry to 7 days from now; a pending invitation that has already expired can be resent. A revoked or ' +
      'accepted invitation is 404. Writes `team.invite.resent`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(InvitationDto)
  @ApiErrors([400, 401, 403, 404], {
    ...NOT_FOUND,
    ...OWNER_INVITE,
    400: 'VALIDATION_ERROR with `reason: "ALREADY_MEMBER"` (the e-mail became a member or was invited again)',
  })
  resend(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<InvitationDto> {
    return this.invitations.resend(actor, id, meta);
  }

  @Get('invites/validate/:token')
  @Public()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Check an invitation token',
    description:
      'Public. `{valid: true, organizationName, role, inviterEmail}`, or `{valid: false, reason}` with reason ' +
      '`expired`, `revoked`, `used` or `not_found` (an invalid token never reveals the organization).',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiEnvelope(InviteValidationDto)
  validate(@Param('token') token: string): Promise<InviteValidationDto> {
    return this.invitations.validate(token);
  }

  @Post('invites/:token/accept')
  @Access({ optional: true })
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Accept an invitation',
    description:
      'The token is the credential for the mailbox only, so what else is needed depends on the ' +
      'account the invited address has:\n\n' +
      '- **none**: `{name, password}` (password policy applies) create it;\n' +
      '- **an account whose address was proven** (`emailVerifiedAt`: a confirmed sign-up, a magic link, a reset, ' +
      'an earlier invitation, a verified social address): be signed in as that account (`Authorization: Bearer`, ' +
      'a session not scoped to another organization’s SSO) or send its `password`; else 401. `name` is not used;\n' +
      '- **an account whose address was never proven** (a registration nobody confirmed, an account an IdP or ' +
      'SCIM created): the token is the proof. `{name, password}` are required and replace the account’s name and ' +
      'password; its TOTP and any social or SSO link are removed, and every session and outstanding e-mailed token ' +
      'of it is revoked.\n\n' +
      'A password sent is always checked (a wrong one is 401 INVALID_CREDENTIALS). Creates the membership with ' +
      'the invited role, marks the invitation accepted (single use), writes `team.invite.accepted` (`newUser`, ' +
      '`claimed`) and opens a session in the inviting organization (`auth.login` with method `invite`). An account ' +
      'with MFA enabled gets `{mfaRequired, tempToken}` instead, to finish with `/auth/mfa/login`. When the ' +
      'organization enforces its SSO for the invited address, the membership is created and the answer is 403 ' +
      '`SSO_REQUIRED`: the new member signs in through the IdP.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiAcceptResponse()
  @ApiErrors([400, 401, 403, 404, 409], {
    400:
      'VALIDATION_ERROR (name or password missing or invalid for a new or unproven account; with ' +
      '`reason: "ALREADY_MEMBER"` when the account is already a member), INVITE_ALREADY_USED, INVITE_EXPIRED',
    401:
      'UNAUTHORIZED (the address has a proven account and the caller neither is signed in as it nor sent its ' +
      'password; or an invalid bearer), INVALID_CREDENTIALS (wrong password), ACCOUNT_DEACTIVATED',
    403:
      'REAUTHENTICATION_REQUIRED (the session was opened by another organization’s SSO); SSO_REQUIRED (joined; ' +
      'the organization enforces SSO for the address, `details.ssoUrl` is where sign-in starts)',
    404: 'NOT_FOUND (unknown or revoked invitation)',
    409: 'EMAIL_IN_USE (an account for the e-mail was created at the same moment; retry)',
  })
  accept(
    @Param('token') token: string,
    @Body() dto: AcceptInvitationDto,
    @OptionalActor() caller: Actor | undefined,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AcceptedInvitationDto | MfaChallengeDto> {
    return this.invitations.accept(token, dto, caller, meta);
  }
}
