import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  DeletedDto,
  Endpoint,
  type Page,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import {
  CreatePolicyDto,
  ListPoliciesQueryDto,
  PolicyDto,
  PolicyTemplateDto,
  UpdatePolicyDto,
} from './dto/policy.dto.js';
import { POLICY_DOCS as DOCS, POLICY_ERRORS as ERRORS, POLICY_ID } from './policies.docs.js';
import { PoliciesService } from './policies.service.js';

/** Policies evaluated against every trace. Any role reads; owners and admins write. */
@ApiTags('Policies')
@Controller('policies')
@ApiErrors([401, 403])
export class PoliciesController {
  constructor(private readonly policies: PoliciesService) {}

  @Get()
  @Endpoint({
    summary: 'List policies',
    description: DOCS.list,
    access: { roles: Permission.read },
    success: { model: PolicyDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: ListPoliciesQueryDto): Promise<Page<PolicyDto>> {
    return this.policies.list(actor, query);
  }

  // Declared before `:id` so that the static path is never read as an id.
  @Get('templates')
  @Endpoint({
    summary: 'List policy templates',
    description: DOCS.templates,
    access: { roles: Permission.read },
    success: { model: PolicyTemplateDto, isArray: true },
  })
  templates(): PolicyTemplateDto[] {
    return this.policies.templates();
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get a policy',
    access: { roles: Permission.read },
    params: [POLICY_ID],
    success: PolicyDto,
    errors: [404],
    errorCodes: ERRORS.notFound,
  })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<PolicyDto> {
    return this.policies.get(actor, id);
  }

  @Post()
  @Endpoint({
    summary: 'Create a policy',
    description: DOCS.create,
    access: { roles: Permission.editPolicies },
    success: { model: PolicyDto, status: 201 },
    errors: [400],
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreatePolicyDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<PolicyDto> {
    return this.policies.create(actor, dto, meta);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Update a policy',
    description: DOCS.update,
    access: { roles: Permission.editPolicies },
    params: [POLICY_ID],
    success: PolicyDto,
    errors: [400, 404],
    errorCodes: ERRORS.notFound,
  })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdatePolicyDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<PolicyDto> {
    return this.policies.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Delete a policy',
    description: DOCS.remove,
    access: { roles: Permission.editPolicies },
    params: [POLICY_ID],
    success: DeletedDto,
    errors: [404],
    errorCodes: ERRORS.notFound,
  })
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.policies.remove(actor, id, meta);
  }
}
