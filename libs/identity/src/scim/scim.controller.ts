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
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public, RawResponse, ReqMeta, type RequestMeta, SCIM_MEDIA_TYPE, scimError } from '#platform';
import { ScimAuthGuard } from './scim-auth.guard.js';
import { listResponse, resourceTypes, SCHEMA, schemas, serviceProviderConfig } from './scim-discovery.js';
import { ScimGroupsService } from './scim-groups.service.js';
import type { ScimPrincipal } from './scim-tokens.service.js';
import { type ListQuery, ScimUsersService } from './scim-users.service.js';

const SCIM_JSON = 'application/scim+json';
const RESOURCE = { type: 'object' as const, additionalProperties: true };
const ERROR = {
  type: 'object' as const,
  required: ['schemas', 'status'],
  properties: {
    schemas: { type: 'array' as const, items: { type: 'string' as const } },
    status: { type: 'string' as const },
    scimType: { type: 'string' as const },
    detail: { type: 'string' as const },
  },
};
const scimContent = (schema: object) => ({ [SCIM_JSON]: { schema }, 'application/json': { schema } });
const errors = (statuses: [number, string][]) =>
  statuses.map(([status, description]) => ApiResponse({ status, description, content: scimContent(ERROR) }));
const AUTH_ERRORS: [number, string][] = [
  [401, 'No or an invalid SCIM token'],
  [403, 'The plan does not include scim'],
  [429, '600 requests per 15 minutes per token and per IP; see Retry-After'],
];
const LIST_QUERIES = [
  ApiQuery({
    name: 'filter',
    required: false,
    type: String,
    description: 'RFC 7644 filter (e.g. `userName eq "a@b.c"`).',
  }),
  ApiQuery({ name: 'startIndex', required: false, type: String, description: '1-based, default 1.' }),
  ApiQuery({ name: 'count', required: false, type: String, description: 'Default 100, at most 200.' }),
  ApiQuery({ name: 'attributes', required: false, type: String }),
  ApiQuery({ name: 'excludedAttributes', required: false, type: String }),
];
const decorate =
  (...decorators: MethodDecorator[]): MethodDecorator =>
  (target, key, descriptor) => {
    for (const d of decorators) d(target, key, descriptor);
  };

const principalOf = (request: FastifyRequest): ScimPrincipal => request.scim!;

/** A route of the token's organization: public to the global guard, authenticated by the SCIM token's. */
const ScimRoute = () =>
  applyDecorators(Public(), UseGuards(ScimAuthGuard), RawResponse(), ApiBearerAuth('scimToken'));
/** A public discovery document, as SCIM JSON. */
const ScimDiscovery = () => applyDecorators(Public(), RawResponse(), Header('Content-Type', SCIM_MEDIA_TYPE));

/**
 * SCIM 2.0 at `/scim/v2`, outside the versioned API: the public discovery documents, and the Users and
 * role-bucket Groups of the token's organization. Bodies and errors follow RFC 7643/7644, as `application/scim+json`.
 * See docs/identity-administrators.md, "SCIM provisioning"; test/scim.e2e-spec.ts and test/scim-dialects.e2e-spec.ts.
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
  @ApiOperation({ summary: 'What this SCIM service provider supports (public)' })
  @ApiProduces(SCIM_JSON)
  @ApiResponse({ status: 200, description: 'ServiceProviderConfig', content: scimContent(RESOURCE) })
  serviceProviderConfig(): Record<string, unknown> {
    return serviceProviderConfig(this.users.base);
  }

  @Get('ResourceTypes')
  @ScimDiscovery()
  @ApiOperation({ summary: 'The resource types, User and Group (public)' })
  @ApiResponse({ status: 200, description: 'ListResponse', content: scimContent(RESOURCE) })
  resourceTypes(): Record<string, unknown> {
    const all = resourceTypes(this.users.base);
    return listResponse(all, all.length, 1);
  }

  @Get('ResourceTypes/:id')
  @ScimDiscovery()
  @ApiOperation({ summary: 'One resource type (public)' })
  @ApiParam({ name: 'id', description: '`User` or `Group`' })
  @ApiResponse({ status: 200, description: 'ResourceType', content: scimContent(RESOURCE) })
  @decorate(...errors([[404, 'No such resource type']]))
  resourceType(@Param('id') id: string): Record<string, unknown> {
    const found = resourceTypes(this.users.base).find((r) => r.id === id);
    if (!found) throw scimError(404, undefined, 'Resource type not found');
    return found;
  }

  @Get('Schemas')
  @ScimDiscovery()
  @ApiOperation({ summary: 'The schemas of User and Group, with their attribute definitions (public)' })
  @ApiResponse({ status: 200, description: 'ListResponse', content: scimContent(RESOURCE) })
  schemas(): Record<string, unknown> {
    const all = schemas(this.users.base);
    return listResponse(all, all.length, 1);
  }

  @Get('Schemas/:id')
  @ScimDiscovery()
  @ApiOperation({ summary: 'One schema, by its URN (public)' })
  @ApiParam({ name: 'id', description: `\`${SCHEMA.user}\` or \`${SCHEMA.group}\`` })
  @ApiResponse({ status: 200, description: 'Schema', content: scimContent(RESOURCE) })
  @decorate(...errors([[404, 'No such schema']]))
  schema(@Param('id') id: string): Record<string, unknown> {
    const found = schemas(this.users.base).find((s) => s.id === id);
    if (!found) throw scimError(404, undefined, 'Schema not found');
    return found;
  }

  @Get('Users')
  @ScimRoute()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @ApiOperation({
    summary: 'List the organization’s users',
    description:
      'Members of the token’s organization, oldest first. `filter`: every RFC 7644 operator (`eq ne co sw ew pr gt ' +
      'ge lt le`), `and`, `or`, `not`, parentheses, on userName, displayName, active, externalId, emails.value, ' +
      'name.givenName, name.familyName, meta.created, meta.lastModified (userName and names case-insensitive). ' +
      'Unparseable: 400 invalidFilter.',
  })
  @decorate(...LIST_QUERIES)
  @ApiResponse({ status: 200, description: 'ListResponse of Users', content: scimContent(RESOURCE) })
  @decorate(...errors([[400, 'invalidFilter, invalidValue'], ...AUTH_ERRORS]))
  listUsers(@Req() request: FastifyRequest, @Query() query: ListQuery): Promise<Record<string, unknown>> {
    return this.users.list(principalOf(request), query);
  }

  @Get('Users/:id')
  @ScimRoute()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @ApiOperation({ summary: 'One user (404 outside the organization)' })
  @ApiQuery({ name: 'attributes', required: false, type: String })
  @ApiQuery({ name: 'excludedAttributes', required: false, type: String })
  @ApiResponse({ status: 200, description: 'User', content: scimContent(RESOURCE) })
  @decorate(...errors([[404, 'Not a member of the organization'], ...AUTH_ERRORS]))
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
  @ApiOperation({
    summary: 'Provision a user',
    description:
      'Creates the account and its membership atomically. userName is the e-mail address (lower-cased); ' +
      'displayName falls back to the given and family names, then the address’s local part. The role comes from ' +
      'the body’s `groups[].display|value` and `roles[].value` against the organization’s role-mapping rules ' +
      '(default member). An address that already has an account: 409 uniqueness. Writes `scim.user.created`.',
  })
  @ApiConsumes(SCIM_JSON, 'application/json')
  @ApiBody({ schema: RESOURCE })
  @ApiResponse({ status: 201, description: 'The User; Location header', content: scimContent(RESOURCE) })
  @decorate(...errors([[400, 'invalidValue, invalidSyntax'], [409, 'uniqueness'], ...AUTH_ERRORS]))
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
  @ApiOperation({
    summary: 'Replace a user',
    description:
      'A full replace: attributes left out are cleared (name, externalId, displayName, which then falls back) or ' +
      'reset (active: true). Writes `scim.user.updated`, and `scim.user.deactivated|reactivated` when active changes.',
  })
  @ApiConsumes(SCIM_JSON, 'application/json')
  @ApiBody({ schema: RESOURCE })
  @ApiResponse({ status: 200, description: 'The User', content: scimContent(RESOURCE) })
  @decorate(...errors([[400, 'invalidValue'], [404, 'Not a member'], [409, 'uniqueness'], ...AUTH_ERRORS]))
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
  @ApiOperation({
    summary: 'Change a user (PatchOp)',
    description:
      '`Operations` of `add`, `replace`, `remove` (any case), on a path (userName, displayName, active, externalId, ' +
      'name.givenName, name.familyName, name, `emails[type eq "work"].value`), or without path with a partial user. ' +
      'All or nothing: one bad operation leaves the user unchanged. Booleans may be the strings "True"/"False"; a ' +
      'value may come as an object or a one-element array. Extension attributes and RFC 7643 attributes the service ' +
      'does not keep are ignored; a path naming nothing is 400 invalidValue.',
  })
  @ApiConsumes(SCIM_JSON, 'application/json')
  @ApiBody({ schema: RESOURCE })
  @ApiResponse({ status: 200, description: 'The User', content: scimContent(RESOURCE) })
  @decorate(
    ...errors([
      [400, 'invalidValue, noTarget, invalidSyntax'],
      [404, 'Not a member'],
      [409, 'uniqueness'],
      ...AUTH_ERRORS,
    ]),
  )
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
  @ApiOperation({
    summary: 'Deprovision a user (soft)',
    description:
      'The membership becomes inactive, as `active: false` (sign-in refused, open sessions get ' +
      'ACCOUNT_DEACTIVATED); the account is kept. Writes `scim.user.deactivated`.',
  })
  @ApiResponse({ status: 204, description: 'Deactivated' })
  @decorate(...errors([[400, 'The last active owner'], [404, 'Not a member'], ...AUTH_ERRORS]))
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
  @ApiOperation({
    summary: 'List the role buckets',
    description:
      'The four fixed groups `owner`, `admin`, `member`, `reviewer` (the viewer role), with their members (at most ' +
      '1,000 each; `excludedAttributes=members` leaves them out). `filter` on displayName, id or members.value.',
  })
  @decorate(...LIST_QUERIES)
  @ApiResponse({ status: 200, description: 'ListResponse of Groups', content: scimContent(RESOURCE) })
  @decorate(...errors([[400, 'invalidFilter'], ...AUTH_ERRORS]))
  listGroups(@Req() request: FastifyRequest, @Query() query: ListQuery): Promise<Record<string, unknown>> {
    return this.groups.list(principalOf(request), query);
  }

  @Get('Groups/:id')
  @ScimRoute()
  @Header('Content-Type', SCIM_MEDIA_TYPE)
  @ApiOperation({ summary: 'One role bucket, with its members' })
  @ApiParam({ name: 'id', description: '`owner`, `admin`, `member` or `reviewer`' })
  @ApiQuery({ name: 'attributes', required: false, type: String })
  @ApiQuery({ name: 'excludedAttributes', required: false, type: String })
  @ApiResponse({ status: 200, description: 'Group', content: scimContent(RESOURCE) })
  @decorate(...errors([[404, 'No such group'], ...AUTH_ERRORS]))
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
  @ApiOperation({
    summary: 'Add or remove members of a role bucket',
    description:
      '`add` members (they get the bucket’s role), `remove` them (they become `member`) by value list or by the ' +
      'path `members[value eq "<id>"]`, or `replace` the list (Okta). All or nothing; the organization keeps an ' +
      'active owner (400). Renaming a bucket: 400 mutability. Writes `scim.group.updated`.',
  })
  @ApiConsumes(SCIM_JSON, 'application/json')
  @ApiBody({ schema: RESOURCE })
  @ApiResponse({ status: 204, description: 'Changed' })
  @decorate(
    ...errors([[400, 'invalidValue, mutability, invalidFilter'], [404, 'No such group'], ...AUTH_ERRORS]),
  )
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
  @ApiOperation({ summary: 'Not supported: the groups are the four fixed role buckets (405)' })
  @decorate(...errors([[405, 'The role buckets are fixed'], ...AUTH_ERRORS]))
  createGroup(): never {
    throw fixedGroups();
  }

  @Put('Groups/:id')
  @ScimRoute()
  @ApiOperation({ summary: 'Not supported: the groups are the four fixed role buckets (405)' })
  @ApiParam({ name: 'id', description: 'A role bucket' })
  @decorate(...errors([[405, 'The role buckets are fixed'], ...AUTH_ERRORS]))
  replaceGroup(): never {
    throw fixedGroups();
  }

  @Delete('Groups/:id')
  @ScimRoute()
  @ApiOperation({ summary: 'Not supported: the groups are the four fixed role buckets (405)' })
  @ApiParam({ name: 'id', description: 'A role bucket' })
  @decorate(...errors([[405, 'The role buckets are fixed'], ...AUTH_ERRORS]))
  deleteGroup(): never {
    throw fixedGroups();
  }
}

const fixedGroups = () =>
  scimError(405, undefined, 'The groups are the four fixed role buckets; change their members with PATCH');
