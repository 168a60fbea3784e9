import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import {
  type Actor,
  ApiErrors,
  CurrentActor,
  DeletedDto,
  Endpoint,
  type Page,
  PaginationQueryDto,
  Permission,
  ReqMeta,
  type RequestMeta,
} from '#platform';
import { AGENT_DOCS as DOCS, AGENT_ERRORS as ERRORS, AGENT_ID } from './agents.docs.js';
import { AgentsService } from './agents.service.js';
import {
  AgentDetailDto,
  AgentDto,
  CreateAgentDto,
  CreatedAgentDto,
  RegeneratedAgentKeyDto,
  UpdateAgentDto,
} from './dto/agent.dto.js';

/** Agents and their `svc_agent_` keys. Reads accept keys within their scope; changes need a user session. */
@ApiTags('Agents')
@Controller('agents')
@ApiErrors([401, 403])
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @Get()
  @Endpoint({
    summary: 'List agents',
    description: DOCS.list,
    access: { via: ['jwt', 'workspaceKey', 'agentKey'], roles: Permission.read },
    success: { model: AgentDto, paginated: true },
    errors: [400],
  })
  list(@CurrentActor() actor: Actor, @Query() query: PaginationQueryDto): Promise<Page<AgentDto>> {
    return this.agents.list(actor, query);
  }

  @Post()
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Create an agent and its key',
    description: DOCS.create,
    access: { roles: Permission.editAgents },
    success: { model: CreatedAgentDto, status: 201 },
    errors: [400],
  })
  create(
    @CurrentActor() actor: Actor,
    @Body() dto: CreateAgentDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<CreatedAgentDto> {
    return this.agents.create(actor, dto, meta);
  }

  @Get(':id')
  @Endpoint({
    summary: 'Get an agent with its analytics',
    description: DOCS.get,
    access: { via: ['jwt', 'workspaceKey', 'agentKey'], roles: Permission.read },
    params: [AGENT_ID],
    success: AgentDetailDto,
    errors: [404],
    errorCodes: ERRORS.notFound,
  })
  get(@CurrentActor() actor: Actor, @Param('id') id: string): Promise<AgentDetailDto> {
    return this.agents.get(actor, id);
  }

  @Patch(':id')
  @Endpoint({
    summary: 'Rename an agent or change its description',
    description: DOCS.update,
    access: { roles: Permission.editAgents },
    params: [AGENT_ID],
    success: AgentDto,
    errors: [400, 404],
    errorCodes: ERRORS.owned,
  })
  update(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @Body() dto: UpdateAgentDto,
    @ReqMeta() meta: RequestMeta,
  ): Promise<AgentDto> {
    return this.agents.update(actor, id, dto, meta);
  }

  @Delete(':id')
  @Endpoint({
    summary: 'Delete an agent',
    description: DOCS.remove,
    access: { roles: Permission.editAgents },
    params: [AGENT_ID],
    success: DeletedDto,
    errors: [404],
    errorCodes: ERRORS.owned,
  })
  remove(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<DeletedDto> {
    return this.agents.remove(actor, id, meta);
  }

  @Post(':id/regenerate-key')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Endpoint({
    summary: 'Regenerate an agent’s key',
    description: DOCS.regenerateKey,
    access: { roles: Permission.editAgents },
    params: [AGENT_ID],
    success: RegeneratedAgentKeyDto,
    errors: [404],
    errorCodes: ERRORS.owned,
  })
  regenerateKey(
    @CurrentActor() actor: Actor,
    @Param('id') id: string,
    @ReqMeta() meta: RequestMeta,
  ): Promise<RegeneratedAgentKeyDto> {
    return this.agents.regenerateKey(actor, id, meta);
  }
}
