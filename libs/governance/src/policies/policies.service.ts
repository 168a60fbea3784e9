import { Injectable } from '@nestjs/common';
import {
  type Actor,
  AgentDirectory,
  AppError,
  assertAgentsOf,
  AuditLog,
  Clock,
  type DeletedDto,
  isObjectId,
  newId,
  type Page,
  pageRequest,
  type RequestMeta,
  toPage,
  TransactionHost,
} from '#platform';
import type { AgentReferenceChange } from '../agents/agent-references.js';
import {
  compile,
  findPolicyTemplate,
  InvalidPolicyError,
  POLICY_DEFAULTS,
  POLICY_TEMPLATES,
} from './engine/index.js';
import {
  type CreatePolicyDto,
  type ListPoliciesQueryDto,
  type PolicyDto,
  type PolicyTemplateDto,
  toPolicyResponse,
  toPolicyTemplateResponse,
  type UpdatePolicyDto,
} from './dto/policy.dto.js';
import { PoliciesRepository, type PolicyPatch } from './policies.repository.js';
import { CachedPolicySet, toPolicyInput } from './policy-cache.js';
import type { PolicyRow } from './policy.schema.js';

const LIST_PAGE = { limit: 100, max: 100 };

/** Fields a full create may send; beside `templateId` only `name` is accepted. */
const NON_TEMPLATE_FIELDS = [
  'description',
  'outcome',
  'conditions',
  'match',
  'agentIds',
  'priority',
  'isActive',
] as const;

const PATCHABLE_FIELDS = ['name', 'description', ...NON_TEMPLATE_FIELDS] as const;

/** Validates the policy as the engine will run it; its refusals become a 400 with one detail per path. */
function assertCompiles(row: Omit<PolicyRow, 'organizationId' | 'createdBy' | 'createdAt' | 'updatedAt'>) {
  try {
    compile(toPolicyInput(row as PolicyRow));
  } catch (err) {
    if (err instanceof InvalidPolicyError) {
      throw AppError.validation(`Invalid policy: ${err.details[0]?.message ?? 'invalid'}`, err.details);
    }
    throw err;
  }
}

const unique = (ids: readonly string[]): string[] => [...new Set(ids)];

/** Policies: CRUD with engine validation, templates, and invalidation of the compiled set on every change. */
@Injectable()
export class PoliciesService {
  constructor(
    private readonly repo: PoliciesRepository,
    private readonly audit: AuditLog,
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly cache: CachedPolicySet,
    private readonly agents: AgentDirectory,
  ) {}

  templates(): PolicyTemplateDto[] {
    return POLICY_TEMPLATES.map(toPolicyTemplateResponse);
  }

  async list(actor: Actor, query: ListPoliciesQueryDto): Promise<Page<PolicyDto>> {
    const page = pageRequest(query, LIST_PAGE);
    const { rows, total } = await this.repo.list(
      actor.organizationId,
      query.includeInactive === 'true',
      page,
    );
    return toPage(rows.map(toPolicyResponse), total, page);
  }

  async get(actor: Actor, id: string): Promise<PolicyDto> {
    const row = isObjectId(id) ? await this.repo.find(actor.organizationId, id) : undefined;
    if (!row) throw AppError.notFound('Policy');
    return toPolicyResponse(row);
  }

  create(actor: Actor, dto: CreatePolicyDto, meta: RequestMeta): Promise<PolicyDto> {
    const draft = this.draftOf(dto);
    assertCompiles({ id: 'new', ...draft });
    return this.tx.run(async () => {
      // The ids as sent, so that a detail names the position in the request, not in the deduplicated list.
      if (dto.agentIds) await assertAgentsOf(this.agents, actor.organizationId, dto.agentIds, 'agentIds');
      const now = this.clock.now();
      const row = await this.repo.insert({
        id: newId(now.getTime()),
        organizationId: actor.organizationId,
        ...draft,
        createdBy: actor.userId,
        createdAt: now,
        updatedAt: now,
      });
      await this.cache.announceChange(actor.organizationId);
      await this.audit.record(
        actor,
        'policy.created',
        { type: 'policy', id: row.id },
        {
          name: row.name,
          outcome: row.outcome,
          templateId: row.templateId,
          isActive: row.isActive,
        },
        meta,
      );
      return toPolicyResponse(row);
    });
  }

  update(actor: Actor, id: string, dto: UpdatePolicyDto, meta: RequestMeta): Promise<PolicyDto> {
    if (!isObjectId(id)) return Promise.reject(AppError.notFound('Policy'));
    return this.tx.run(async () => {
      const before = await this.repo.findForUpdate(actor.organizationId, id);
      if (!before) throw AppError.notFound('Policy');
      // Every id sent is checked, also one the policy already holds: the answer depends on the request alone.
      if (dto.agentIds) await assertAgentsOf(this.agents, actor.organizationId, dto.agentIds, 'agentIds');
      const patch = this.patchOf(before, dto);
      const changed = Object.keys(patch);
      if (changed.length === 0) return toPolicyResponse(before);
      // The merged policy is validated as a whole: a new operator may not fit the old value, and so on.
      assertCompiles({ ...before, ...patch });
      const row = (await this.repo.update(actor.organizationId, id, patch, this.clock.now()))!;
      await this.cache.announceChange(actor.organizationId);
      await this.audit.record(
        actor,
        'policy.updated',
        { type: 'policy', id: row.id },
        { name: row.name, changed },
        meta,
      );
      return toPolicyResponse(row);
    });
  }

  remove(actor: Actor, id: string, meta: RequestMeta): Promise<DeletedDto> {
    if (!isObjectId(id)) return Promise.reject(AppError.notFound('Policy'));
    return this.tx.run(async () => {
      const row = await this.repo.delete(actor.organizationId, id);
      if (!row) throw AppError.notFound('Policy');
      await this.cache.announceChange(actor.organizationId);
      await this.audit.record(
        actor,
        'policy.deleted',
        { type: 'policy', id: row.id },
        { name: row.name, outcome: row.outcome, templateId: row.templateId },
        meta,
      );
      return { id: row.id, deleted: true };
    });
  }

  /**
   * Removes a deleted agent's id from the organization's policies, inside the agent's deletion (AgentReferencesPort),
   * and returns the audit entries to write (`policy.updated` with `reason: 'agent_deleted'`) once the caller holds
   * every row lock. A policy that named only deleted agents would apply to every agent with an empty list, so it is
   * deactivated as well: it keeps governing what it governed (nothing now) until someone activates it on purpose.
   */
  async detachAgent(organizationId: string, agentId: string, at: Date): Promise<AgentReferenceChange[]> {
    const rows = await this.repo.findNamingAgentForUpdate(organizationId, agentId);
    if (rows.length === 0) return [];
    const changes: AgentReferenceChange[] = [];
    for (const before of rows) {
      const agentIds = before.agentIds.filter((id) => id !== agentId);
      const patch: PolicyPatch = { agentIds };
      if (agentIds.length === 0 && before.isActive) patch.isActive = false;
      const row = (await this.repo.update(organizationId, before.id, patch, at))!;
      const changed = Object.keys(patch);
      const detail: Record<string, { from: unknown; to: unknown }> = {
        agentIds: { from: before.agentIds, to: row.agentIds },
      };
      if (patch.isActive !== undefined) detail.isActive = { from: before.isActive, to: row.isActive };
      changes.push({
        eventType: 'policy.updated',
        target: { type: 'policy', id: row.id },
        metadata: { name: row.name, changed, changes: detail, reason: 'agent_deleted', agentId },
      });
    }
    await this.cache.announceChange(organizationId);
    return changes;
  }

  /**
   * The stored fields of a new policy, from a template or from the body, with `POLICY_DEFAULTS` for what is left out.
   */
  private draftOf(dto: CreatePolicyDto) {
    if (dto.templateId !== undefined) {
      const extra = NON_TEMPLATE_FIELDS.filter((key) => dto[key] !== undefined);
      if (extra.length > 0) {
        throw AppError.validation(
          'Only name may be sent with templateId',
          extra.map((field) => ({ field, message: 'must be omitted when templateId is given' })),
        );
      }
      const template = findPolicyTemplate(dto.templateId);
      if (!template) {
        throw AppError.validation('Unknown policy template', [
          { field: 'templateId', message: 'is not a known template (see GET /policies/templates)' },
        ]);
      }
      return {
        name: dto.name ?? template.name,
        description: template.description,
        outcome: template.outcome,
        conditions: template.conditions.map((c) => ({ ...c })),
        match: POLICY_DEFAULTS.match,
        agentIds: [] as string[],
        priority: POLICY_DEFAULTS.priority,
        isActive: POLICY_DEFAULTS.isActive,
        templateId: template.id,
      };
    }
    return {
      name: dto.name!,
      description: dto.description ?? null,
      outcome: dto.outcome!,
      conditions: dto.conditions as PolicyRow['conditions'],
      match: dto.match ?? POLICY_DEFAULTS.match,
      agentIds: unique(dto.agentIds ?? []),
      priority: dto.priority ?? POLICY_DEFAULTS.priority,
      isActive: dto.isActive ?? POLICY_DEFAULTS.isActive,
      templateId: null,
    };
  }

  /** Only the fields that differ from the stored policy. */
  private patchOf(before: PolicyRow, dto: UpdatePolicyDto): PolicyPatch {
    const next: Record<string, unknown> = { ...dto };
    if (dto.agentIds !== undefined) next.agentIds = unique(dto.agentIds);
    const patch: Record<string, unknown> = {};
    for (const key of PATCHABLE_FIELDS) {
      if (next[key] === undefined) continue;
      if (JSON.stringify(next[key]) !== JSON.stringify(before[key])) patch[key] = next[key];
    }
    return patch as PolicyPatch;
  }
}
