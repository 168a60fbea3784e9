import { describe, expect, expectTypeOf, it } from 'vitest';
import { createGovernanceClient } from './client.js';
import { BASE, fakeFetch, json } from './spec/fake-fetch.js';
import type { Schemas } from './types.js';

/** A list of `total` agents served in pages, as the service answers `GET /agents?page&limit`. */
function agentsService(total: number, options: { capped?: boolean } = {}) {
  return fakeFetch((request) => {
    const page = Number(request.url.searchParams.get('page') ?? 1);
    const limit = Number(request.url.searchParams.get('limit') ?? 20);
    const all = Array.from({ length: total }, (_, i) => ({
      id: String(i + 1).padStart(24, '0'),
      name: `Agent ${i + 1}`,
    }));
    const data = all.slice((page - 1) * limit, page * limit);
    const counted = options.capped ? Math.min(total, limit) : total;
    return json(200, {
      success: true,
      data,
      pagination: {
        page,
        limit,
        total: counted,
        totalPages: Math.max(1, Math.ceil(counted / limit)),
        ...(options.capped ? { totalCapped: true } : {}),
      },
    });
  });
}

describe('paginate', () => {
  it('yields every item of every page, in order, asking page by page with the limit given', async () => {
    const { fetch, seen } = agentsService(7);
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    const names: string[] = [];
    for await (const agent of client.paginate('/api/v1/agents', { params: { query: { limit: 3 } } })) {
      expectTypeOf(agent).toEqualTypeOf<Schemas['AgentDto']>();
      names.push(agent.name);
    }
    expect(names).toEqual(['Agent 1', 'Agent 2', 'Agent 3', 'Agent 4', 'Agent 5', 'Agent 6', 'Agent 7']);
    expect(seen.map((r) => r.url.search)).toEqual(['?limit=3&page=1', '?limit=3&page=2', '?limit=3&page=3']);
  });

  it('starts at the page given and stops early when the caller breaks', async () => {
    const { fetch, seen } = agentsService(10);
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    const names: string[] = [];
    for await (const agent of client.paginate('/api/v1/agents', {
      params: { query: { limit: 2, page: 3 } },
    })) {
      names.push(agent.name);
      if (names.length === 3) break;
    }
    expect(names).toEqual(['Agent 5', 'Agent 6', 'Agent 7']);
    expect(seen).toHaveLength(2);
  });

  it('asks one page of an empty list', async () => {
    const { fetch, seen } = agentsService(0);
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    const items = [];
    for await (const agent of client.paginate('/api/v1/agents')) items.push(agent);
    expect(items).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('stops at once when the service answers totalPages: 0 (its answer for an empty list)', async () => {
    const { fetch, seen } = fakeFetch((request) =>
      json(200, {
        success: true,
        data: [],
        pagination: {
          page: Number(request.url.searchParams.get('page') ?? 1),
          limit: 20,
          total: 0,
          totalPages: 0,
        },
      }),
    );
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    const items = [];
    for await (const agent of client.paginate('/api/v1/agents')) items.push(agent);
    expect(items).toEqual([]);
    expect(seen.map((r) => r.url.search)).toEqual(['?page=1']);
    // Started past the end, too.
    for await (const agent of client.paginate('/api/v1/agents', { params: { query: { page: 3 } } }))
      items.push(agent);
    expect(items).toEqual([]);
    expect(seen).toHaveLength(2);
    expect(await client.page('/api/v1/agents')).toEqual({
      items: [],
      pagination: { page: 1, limit: 20, total: 0, totalPages: 0 },
    });
  });

  it('goes on past a capped total while pages come full, and stops at the first short one', async () => {
    const { fetch, seen } = agentsService(5, { capped: true });
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    const items = [];
    for await (const agent of client.paginate('/api/v1/agents', { params: { query: { limit: 2 } } }))
      items.push(agent);
    expect(items).toHaveLength(5);
    expect(seen).toHaveLength(3);
  });

  it('page() answers one page with its pagination', async () => {
    const { fetch } = agentsService(5);
    const client = createGovernanceClient({ baseUrl: BASE, fetch, credentials: { jwt: 't' } });
    const page = await client.page('/api/v1/agents', { params: { query: { limit: 2, page: 2 } } });
    expect(page.items.map((a) => a.name)).toEqual(['Agent 3', 'Agent 4']);
    expect(page.pagination).toEqual({ page: 2, limit: 2, total: 5, totalPages: 3 });
  });
});
