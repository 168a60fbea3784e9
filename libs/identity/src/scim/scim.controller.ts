import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Endpoint, RawResponse, ReqMeta, type RequestMeta, SCIM_MEDIA_TYPE, scimError } from '#platform';
import { ScimAuthGuard } from './scim-auth.guard.js';
import { listResponse, resourceTypes, schemas, serviceProviderConfig } from './scim-discovery.js';
import { ScimGroupsService } from './scim-groups.service.js';
import type { ScimPrincipal } from './scim-tokens.service.js';
import { type ListQuery, ScimUsersService } from './scim-users.service.js';
import {
  ATTRIBUTE_QUERY,
  FIXED_GROUP_ID,
  GROUP_ID,
  LIST_QUERY,
  RESOURCE_TYPE_ID,
  SCHEMA_ID,
  SCIM_BODY,
  SCIM_DOCS as DOCS,
  SCIM_PRODUCES,
  SCIM_RESPONSES as RESPONSES,
} from './scim.docs.js';

const principalOf = (request: FastifyRequest): ScimPrincipal => request.scim!;

/**
 * A route of the token's organization, authenticated by the SCIM token's guard: the global guard lets it through
 * (`access: 'public'` in its `Endpoint`).
 */
const ScimRoute = () => applyDecorators(UseGuards(ScimAuthGuard), RawResponse(), ApiBearerAuth('scimToken'));
/** A public discovery document, as SCIM JSON. */
const ScimDiscovery = () => applyDecorators(RawResponse(), Header('Content-Type', SCIM_MEDIA_TYPE));

/**
 * SCIM 2.0 at `/scim/v2`, outside the versioned API: the public discovery documents, and the Users and
 * role-bucket Groups of the token's organization. Bodies and errors follow RFC 7643/7644, as `application/scim+json`.
 * See docs/identity-administrators.md, "SCIM provisioning"; test/scim-*.e2e-spec.ts.
 */
@ApiTags('SCIM')
@Controller('scim/v2')
export class ScimController {
  constructor(
    private readonly users: ScimUsersService,
    private readonly groups: ScimGroupsService,
  ) {}

  @Get('ServiceProviderConfig')
  @ScimDiscovery()
  @Endpoint({
    summary: 'What this SCIM service provider supports (public)',
    access: 'public',
    produces: SCIM_PRODUCES,
    responses: RESPONSES.serviceProviderConfig,
  })
  serviceProviderConfig(): Record<string, unknown> {
    return serviceProviderConfig(this.users.base);
  }

  @Get('ResourceTypes')
  @ScimDiscovery()
  @Endpoint({
    summary: 'The resource types, User and Group (public)',
    access: 'public',
    responses: RESPONSES.resourceTypes,
  })
  resourceTypes(): Record<string, unknown> {
    const all = resourceTypes(this.users.base);
    return listResponse(all, all.length, 1);
  }

  @Get('ResourceTypes/:id')
  @ScimDiscovery()
  @Endpoint({
    summary: 'One resource type (public)',
    access: 'public',
    params: [RESOURCE_TYPE_ID],
    responses: RESPONSES.resourceType,
  })
  resourceType(@Param('id') id: string): Record<string, unknown> {
    const found = resourceTypes(this.users.base).find((r) => r.id === id);
    if (!found) throw scimError(404, undefined, 'Resource type not found');
    return found;
  }

  @Get('Schemas')
  @ScimDiscovery()
  @Endpoint({
    summary: 'The schemas of User and Group, with their attribute definitions (public)',
    access: 'public',
    responses: RESPONSES.schemas,
  })
  schemas(): Record<string, unknown> {
    const all = schemas(this.users.base);
    return listResponse(all, all.length, 1);
  }

  @Get('Schemas/:id')
  @ScimDiscovery()
  @Endpoint({
    summary: 'One schema, by its URN (public)',
    access: 'public',
    params: [SCHEMA_ID],
    responses: RESPONSES.schema,
  })
  schema(@Param('id') id: string): Record<string, unknown> {
    const found = schemas(this.users.base).find((s) => s.id === id);
    if (!found) throw scimError(404, undefined, 'Schema not found');
    return found;
  }

  @Get('Users')
  @ScimRoute()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @Endpoint({
    summary: 'List the organization’s users',
    description: DOCS.listUsers,
    access: 'public',
    query: LIST_QUERY,
    responses: RESPONSES.listUsers,
  })
  listUsers(@Req() request: FastifyRequest, @Query() query: ListQuery): Promise<Record<string, unknown>> {
    return this.users.list(principalOf(request), query);
  }

  @Get('Users/:id')
  @ScimRoute()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @Endpoint({
    summary: 'One user (404 outside the organization)',
    access: 'public',
    query: ATTRIBUTE_QUERY,
    responses: RESPONSES.getUser,
  })
  getUser(
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Query() query: ListQuery,
  ): Promise<Record<string, unknown>> {
    return this.users.get(principalOf(request), id, query);
  }

  @Post('Users')
  @ScimRoute()
  @HttpCode(201)
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @Endpoint({
    summary: 'Provision a user',
    description: DOCS.createUser,
    access: 'public',
    ...SCIM_BODY,
    responses: RESPONSES.createUser,
  })
  async createUser(
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Body() body: unknown,
    @ReqMeta() meta: RequestMeta,
  ): Promise<Record<string, unknown>> {
    const user = await this.users.create(principalOf(request), body, meta);
    reply.header('Location', (user.meta as { location: string }).location);
    return user;
  }

  @Put('Users/:id')
  @ScimRoute()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @Endpoint({
    summary: 'Replace a user',
    description: DOCS.replaceUser,
    access: 'public',
    ...SCIM_BODY,
    responses: RESPONSES.replaceUser,
  })
  replaceUser(
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Body() body: unknown,
    @ReqMeta() meta: RequestMeta,
  ): Promise<Record<string, unknown>> {
    return this.users.replace(principalOf(request), id, body, meta);
  }

  @Patch('Users/:id')
  @ScimRoute()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @Endpoint({
    summary: 'Change a user (PatchOp)',
    description: DOCS.patchUser,
    access: 'public',
    ...SCIM_BODY,
    responses: RESPONSES.patchUser,
  })
  patchUser(
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Body() body: unknown,
    @ReqMeta() meta: RequestMeta,
  ): Promise<Record<string, unknown>> {
    return this.users.patch(principalOf(request), id, body, meta);
  }

  @Delete('Users/:id')
  @ScimRoute()
  @HttpCode(204)
  @Endpoint({
    summary: 'Deprovision a user (soft)',
    description: DOCS.deleteUser,
    access: 'public',
    responses: RESPONSES.deleteUser,
  })
  async deleteUser(
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<void> {
    await this.users.deactivate(principalOf(request), id, meta);
  }

  @Get('Groups')
  @ScimRoute()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @Endpoint({
    summary: 'List the role buckets',
    description: DOCS.listGroups,
    access: 'public',
    query: LIST_QUERY,
    responses: RESPONSES.listGroups,
  })
  listGroups(@Req() request: FastifyRequest, @Query() query: ListQuery): Promise<Record<string, unknown>> {
    return this.groups.list(principalOf(request), query);
  }

  @Get('Groups/:id')
  @ScimRoute()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @Endpoint({
    summary: 'One role bucket, with its members',
    access: 'public',
    params: [GROUP_ID],
    query: ATTRIBUTE_QUERY,
    responses: RESPONSES.getGroup,
  })
  getGroup(
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Query() query: ListQuery,
  ): Promise<Record<string, unknown>> {
    return this.groups.get(principalOf(request), id, query);
  }

  @Patch('Groups/:id')
  @ScimRoute()
  @HttpCode(204)
  @Endpoint({
    summary: 'Add or remove members of a role bucket',
    description: DOCS.patchGroup,
    access: 'public',
    ...SCIM_BODY,
    responses: RESPONSES.patchGroup,
  })
  async patchGroup(
    @Req() request: FastifyRequest,
    @Param('id') id: string,
    @Body() body: unknown,
    @ReqMeta() meta: RequestMeta,
  ): Promise<void> {
    await this.groups.patch(principalOf(request), id, body, meta);
  }

  @Post('Groups')
  @ScimRoute()
  @Endpoint({
    summary: 'Not supported: the groups are the four fixed role buckets (405)',
    access: 'public',
    responses: RESPONSES.fixedGroups,
  })
  createGroup(): never {
    throw fixedGroups();
  }

  @Put('Groups/:id')
  @ScimRoute()
  @Endpoint({
    summary: 'Not supported: the groups are the four fixed role buckets (405)',
    access: 'public',
    params: [FIXED_GROUP_ID],
    responses: RESPONSES.fixedGroups,
  })
  replaceGroup(): never {
    throw fixedGroups();
  }

  @Delete('Groups/:id')
  @ScimRoute()
  @Endpoint({
    summary: 'Not supported: the groups are the four fixed role buckets (405)',
    access: 'public',
    params: [FIXED_GROUP_ID],
    responses: RESPONSES.fixedGroups,
  })
  deleteGroup(): never {
    throw fixedGroups();
  }
}

const fixedGroups = () =>
  scimError(405, undefined, 'The groups are the four fixed role buckets; change their members with PATCH');
