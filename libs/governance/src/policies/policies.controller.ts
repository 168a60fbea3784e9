import { Body, Controller, Delete, Get, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import {
  Access,
  type Actor,
  ApiEnvelope,
  ApiErrors,
  CurrentActor,
  DeletedDto,
  objectIdParam,
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
import { PoliciesService } from './policies.service.js';

const ID_PARAM = objectIdParam('id', 'Policy id');
const NOT_FOUND = { 404: 'NOT_FOUND (no policy with this id in the caller’s organization)' };
const CHANGE_EFFECT = 'Trace evaluation uses the change from the next trace on, on every replica.';
const AGENT_IDS_RULE =
  'Every id in `agentIds` must be an agent of the caller’s organization: an unknown, deleted or other ' +
  'organization’s agent id is a 400 VALIDATION_ERROR with a detail naming its position (`agentIds.2`), the ' +
  'same answer in each case, and nothing is stored.';

/** Policies evaluated against every trace. Any role reads; owners and admins write. */
@ApiTags('Policies')
@Controller('policies')
@ApiErrors([401, 403])
export class PoliciesController {
  constructor(private readonly policies: PoliciesService) {}

  @Get()
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'List policies',
    description:
      'Active policies in evaluation order (priority, then creation). `includeInactive=true` lists all. ' +
      'limit default 100, max 100.',
  })
  @ApiEnvelope(PolicyDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: ListPoliciesQueryDto): Promise<Page<PolicyDto>> {
    return this.policies.list(actor, query);
  }

  // Declared before `:id` so that the static path is never read as an id.
  @Get('templates')
  @Access({ roles: Permission.read })
  @ApiOperation({
    summary: 'List policy templates',
    description: 'Pre-built policies; `POST /policies {templateId, name?}` creates one from a template.',
  })
  @ApiEnvelope(PolicyTemplateDto, { isArray: true })
  templates(): PolicyTemplateDto[] {
    return this.policies.templates();
  }

  @Get(':id')
  @Access({ roles: Permission.read })
  @ApiOperation({ summary: 'Get a policy' })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(PolicyDto)
  @ApiErrors([404], NOT_FOUND)
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<PolicyDto> {
    return this.policies.get(actor, id);
  }

  @Post()
  @Access({ roles: Permission.editPolicies })
  @ApiOperation({
    summary: 'Create a policy',
    description:
      'Owner or admin. Either a full policy (`name`, `outcome`, `conditions` required) or `{templateId, name?}`. ' +
      'Conditions are validated by the engine: an unknown field or operator, a bad pattern, a wrongly typed ' +
      'value or too many conditions is a 400 VALIDATION_ERROR whose `details` name the path ' +
      `(\`conditions[0].operator\`). ${AGENT_IDS_RULE} Writes \`policy.created\`. ${CHANGE_EFFECT}`,
  })
  @ApiEnvelope(PolicyDto, { status: 201 })
  @ApiErrors([400])
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreatePolicyDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<PolicyDto> {
    return this.policies.create(actor, dto, meta);
  }

  @Patch(':id')
  @Access({ roles: Permission.editPolicies })
  @ApiOperation({
    summary: 'Update a policy',
    description:
      'Owner or admin. Partial: only the fields sent change (`conditions` is replaced whole); the resulting ' +
      `policy is validated as a whole. ${AGENT_IDS_RULE} Writes \`policy.updated\` with the changed keys when ` +
      `something changed. ${CHANGE_EFFECT}`,
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(PolicyDto)
  @ApiErrors([400, 404], NOT_FOUND)
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdatePolicyDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<PolicyDto> {
    return this.policies.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Access({ roles: Permission.editPolicies })
  @ApiOperation({
    summary: 'Delete a policy',
    description: `Owner or admin. Writes \`policy.deleted\` (the audit entry is kept). ${CHANGE_EFFECT}`,
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(DeletedDto)
  @ApiErrors([404], NOT_FOUND)
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.policies.remove(actor, id, meta);
  }
}
