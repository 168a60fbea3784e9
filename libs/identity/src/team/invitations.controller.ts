import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  CurrentActor,
  OptionalActor,
  DeletedDto,
  Endpoint,
  type Page,
  PaginationQueryDto,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import type { MfaChallengeDto } from '../auth/dto/auth.dto.js';
import {
  AcceptInvitationDto,
  type AcceptedInvitationDto,
  CreateInvitationDto,
  InvitationDto,
  InviteValidationDto,
} from './dto/invitation.dto.js';
import {
  ACCEPT_RESPONSE,
  INVITATION_DOCS as DOCS,
  INVITATION_ERRORS as ERRORS,
  INVITATION_ID,
  INVITATION_TOKEN,
} from './invitations.docs.js';
import { InvitationsService } from './invitations.service.js';

/** Invitations of the caller's organization, and the two public routes of the invitee. */
@ApiTags('Team')
@Controller('team')
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @Post('invite')
  @Endpoint({
    summary: 'Invite someone by e-mail',
    description: DOCS.create,
    access: { roles: Permission.manageTeam },
    success: { model: InvitationDto, status: 201 },
    errors: [400, 401, 403],
    errorCodes: ERRORS.create,
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateInvitationDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<InvitationDto> {
    return this.invitations.create(actor, dto, meta);
  }

  @Get('invites')
  @Endpoint({
    summary: 'List pending invitations',
    description: DOCS.list,
    access: { roles: Permission.manageTeam },
    success: { model: InvitationDto, paginated: true },
    errors: [400, 401, 403],
  })
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<InvitationDto>> {
    return this.invitations.list(actor, query);
  }

  @Delete('invites/:id')
  @Endpoint({
    summary: 'Revoke an invitation',
    description: DOCS.revoke,
    access: { roles: Permission.manageTeam },
    params: [INVITATION_ID],
    success: DeletedDto,
    errors: [401, 403, 404],
    errorCodes: ERRORS.notFound,
  })
  revoke(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.invitations.revoke(actor, id, meta);
  }

  @Post('invites/:id/resend')
  @HttpCode(200)
  @Endpoint({
    summary: 'Resend an invitation',
    description: DOCS.resend,
    access: { roles: Permission.manageTeam },
    params: [INVITATION_ID],
    success: InvitationDto,
    errors: [400, 401, 403, 404],
    errorCodes: ERRORS.resend,
  })
  resend(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<InvitationDto> {
    return this.invitations.resend(actor, id, meta);
  }

  @Get('invites/validate/:token')
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Check an invitation token',
    description: DOCS.validate,
    access: 'public',
    params: [INVITATION_TOKEN],
    success: InviteValidationDto,
  })
  validate(@Param('token') token: string): Promise<InviteValidationDto> {
    return this.invitations.validate(token);
  }

  @Post('invites/:token/accept')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Accept an invitation',
    description: DOCS.accept,
    access: { optional: true },
    params: [INVITATION_TOKEN],
    ...ACCEPT_RESPONSE,
    errors: [400, 401, 403, 404, 409],
    errorCodes: ERRORS.accept,
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
