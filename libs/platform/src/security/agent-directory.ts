import { AppError, type ErrorDetail } from '../http/app-error.js';

/**
 * Which agents an organization has, for modules that store agent ids (workspace key scopes, policies). Agents
 * live in governance, which identity may not import: the agents module provides this port. It lives in platform,
 * beside the API-key seam, so that governance does not import identity for it either: identity imports governance
 * (the audit trail), and a cycle between two libraries' entries breaks start-up under native ESM.
 */
export abstract class AgentDirectory {
  /**
   * Those of `ids` that are not agents of the organization: unknown, deleted, or another organization's.
   * One query for all of them.
   */
  abstract unknownIds(organizationId: string, ids: readonly string[]): Promise<string[]>;
}

const NOT_AN_AGENT = 'is not an agent of this organization';

/**
 * Refuses agent ids that are not agents of the organization: 400 VALIDATION_ERROR with a detail for every
 * position that holds one (`scope.agentIds.2`). Neither the message nor the details echo the id or say why it
 * was refused, so another organization's agent and an id that exists nowhere get the same body.
 *
 * Call it in the transaction that stores the ids. Deleting an agent takes its id out of policies and key scopes
 * in its own transaction; one deleted between this check and the commit can still leave its id behind, since no
 * lock is taken. Ids are never reused, and another organization's agent never becomes this one's.
 */
export async function assertAgentsOf(
  directory: AgentDirectory,
  organizationId: string,
  ids: readonly string[],
  field: string,
): Promise<void> {
  if (ids.length === 0) return;
  const unknown = new Set(await directory.unknownIds(organizationId, [...new Set(ids)]));
  if (unknown.size === 0) return;
  const details: ErrorDetail[] = [];
  ids.forEach((id, index) => {
    if (unknown.has(id))
      details.push({ field: `${field}.${index}`, message: `${field}.${index} ${NOT_AN_AGENT}` });
  });
  throw AppError.validation(`Validation failed: ${details[0]!.message}`, details);
}
