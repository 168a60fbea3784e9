import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
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
  PaginationQueryDto,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { AgentsService } from './agents.service.js';
import {
  AgentDetailDto,
  AgentDto,
  CreateAgentDto,
  CreatedAgentDto,
  RegeneratedAgentKeyDto,
  UpdateAgentDto,
} from './dto/agent.dto.js';

const ID_PARAM = objectIdParam('id', 'Agent id');
const NOT_FOUND = {
  404: 'NOT_FOUND (no agent with this id in the caller’s organization, or outside the API key’s scope)',
};
const OWNERSHIP = {
  403: 'FORBIDDEN (role lacks permission, a member changing an agent created by someone else, or an API key)',
};
const OWNERSHIP_RULE =
  'Owner or admin for any agent; a member only for agents they created. User session only: API keys get 403.';

/** Agents and their `svc_agent_` keys. Reads accept keys within their scope; changes need a user session. */
@ApiTags('Agents')
@Controller('agents')
@ApiErrors([401, 403])
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @Get()
  @Access({ via: ['jwt', 'workspaceKey', 'agentKey'], roles: Permission.read })
  @ApiOperation({
    summary: 'List agents',
    description:
      'Any role, a workspace key or an agent key. Newest first; limit default 50, max 100. A workspace key scoped ' +
      'to agents lists only those; an agent key lists only its own agent. `keyPrefix` is the start of the live key.',
  })
  @ApiEnvelope(AgentDto, { paginated: true })
  @ApiErrors([400])
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<AgentDto>> {
    return this.agents.list(actor, query);
  }

  @Post()
  @Access({ roles: Permission.editAgents })
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Create an agent and its key',
    description:
      'Owner, admin or member. Returns the agent with its `svc_agent_` key in `apiKey`, shown this once (only its ' +
      'SHA-256 is stored). The key is bound to this agent: its scope is fixed at creation and kept by ' +
      'regeneration. Writes `agent.created` (name and key prefix; never the key).',
  })
  @ApiEnvelope(CreatedAgentDto, { status: 201 })
  @ApiErrors([400])
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateAgentDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedAgentDto> {
    return this.agents.create(actor, dto, meta);
  }

  @Get(':id')
  @Access({ via: ['jwt', 'workspaceKey', 'agentKey'], roles: Permission.read })
  @ApiOperation({
    summary: 'Get an agent with its analytics',
    description:
      'Any role, a workspace key within its scope, or an agent key for its own agent. An agent outside the ' +
      'caller’s scope answers 404, like an absent one, so that other agents’ ids are not disclosed. `analytics` ' +
      'is computed over the agent’s traces: counts by status, mean confidence (two decimals, null when there ' +
      'are no traces), `humanOverrideRate` (traces with `humanOverride` over all the agent’s traces until human ' +
      'verdicts are recorded separately; null when there are none) and the time of the last trace.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(AgentDetailDto)
  @ApiErrors([404], NOT_FOUND)
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<AgentDetailDto> {
    return this.agents.get(actor, id);
  }

  @Patch(':id')
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Rename an agent or change its description',
    description: `${OWNERSHIP_RULE} Writes \`agent.updated\` with the changes (nothing when nothing changed).`,
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(AgentDto)
  @ApiErrors([400, 404], { ...NOT_FOUND, ...OWNERSHIP })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateAgentDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AgentDto> {
    return this.agents.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Access({ roles: Permission.editAgents })
  @ApiOperation({
    summary: 'Delete an agent',
    description:
      `${OWNERSHIP_RULE} The agent’s traces are retained; its key is revoked at once (401 from the next ` +
      'request). Its id leaves the `agentIds` of the organization’s policies and the `scope.agentIds` of its ' +
      'workspace keys in the same transaction; a policy or key left naming no agent (which would mean every ' +
      'agent) is deactivated or revoked instead of widened. Writes `agent.deleted` (listing them in ' +
      '`detachedFrom`) and, per changed record, `policy.updated`, `auth.key_updated` or `auth.key_revoked` with ' +
      '`reason: agent_deleted`.',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(DeletedDto)
  @ApiErrors([404], { ...NOT_FOUND, ...OWNERSHIP })
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.agents.remove(actor, id, meta);
  }

  @Post(':id/regenerate-key')
  @HttpCode(200)
  @Access({ roles: Permission.editAgents })
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Regenerate an agent’s key',
    description:
      `${OWNERSHIP_RULE} Returns the new key in \`apiKey\`, shown this once, with the same scope as the old ` +
      'one; the old key is refused (401) from now on. Writes `agent.key_regenerated` (prefixes only).',
  })
  @ApiParam(ID_PARAM)
  @ApiEnvelope(RegeneratedAgentKeyDto)
  @ApiErrors([404], { ...NOT_FOUND, ...OWNERSHIP })
  regenerateKey(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<RegeneratedAgentKeyDto> {
    return this.agents.regenerateKey(actor, id, meta);
  }
}
