import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../http/app-error.js';
import { AgentDirectory, assertAgentsOf } from './agent-directory.js';

const [own, other, foreign, missing] = ['a', 'b', 'c', 'd'].map((c) => c.repeat(24)) as [
  string,
  string,
  string,
  string,
];

/** A directory that knows `own` and `other` in organization `org`, and `foreign` in another. */
function directory() {
  const known: Record<string, string[]> = { org: [own, other], elsewhere: [foreign] };
  const unknownIds = vi.fn(async (organizationId: string, ids: readonly string[]) =>
    ids.filter((id) => !known[organizationId]?.includes(id)),
  );
  return { unknownIds } satisfies AgentDirectory;
}

async function refusal(ids: string[], field = 'agentIds'): Promise<AppError> {
  const error = await assertAgentsOf(directory(), 'org', ids, field).catch((err: unknown) => err);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('assertAgentsOf', () => {
  it('accepts the organization’s agents, asking once with each id once', async () => {
    const dir = directory();
    await expect(assertAgentsOf(dir, 'org', [own, other, own], 'agentIds')).resolves.toBeUndefined();
    expect(dir.unknownIds).toHaveBeenCalledTimes(1);
    expect(dir.unknownIds).toHaveBeenCalledWith('org', [own, other]);
  });

  it('does not ask for an empty list', async () => {
    const dir = directory();
    await assertAgentsOf(dir, 'org', [], 'agentIds');
    expect(dir.unknownIds).not.toHaveBeenCalled();
  });

  it('refuses with 400 VALIDATION_ERROR naming every position that holds an unknown id', async () => {
    const error = await refusal([own, foreign, other, missing, foreign], 'scope.agentIds');
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(error.details).toEqual(
      [1, 3, 4].map((i) => ({
        field: `scope.agentIds.${i}`,
        message: `scope.agentIds.${i} is not an agent of this organization`,
      })),
    );
  });

  it('answers another organization’s agent exactly as an id that exists nowhere, without echoing either', async () => {
    const [a, b] = [await refusal([own, foreign]), await refusal([own, missing])];
    expect({ message: b.message, details: b.details }).toEqual({ message: a.message, details: a.details });
    expect(JSON.stringify([a.message, a.details])).not.toContain(foreign);
    expect(JSON.stringify([b.message, b.details])).not.toContain(missing);
  });
});
