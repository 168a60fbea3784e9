import { index, jsonb, pgTable, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

export interface ApiKeyScope {
  agentIds?: string[];
  readOnly?: boolean;
}

/**
 * API keys: workspace keys (`svc_live_`) now, agent keys (`svc_agent_`) with the agents module. Only the SHA-256
 * of a key is stored (keys are 256-bit random, so a fast hash is enough); `prefix` is the part listings show.
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: varchar('id', { length: 24 }).primaryKey(),
    organizationId: varchar('organization_id', { length: 24 }).notNull(),
    kind: varchar('kind', { length: 16 }).$type<'workspace' | 'agent'>().notNull(),
    agentId: varchar('agent_id', { length: 24 }),
    name: varchar('name', { length: 120 }).notNull(),
    prefix: varchar('prefix', { length: 32 }).notNull(),
    keyHash: varchar('key_hash', { length: 64 }).notNull(),
    scope: jsonb('scope').$type<ApiKeyScope>().notNull(),
    createdBy: varchar('created_by', { length: 24 }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 3 }).notNull(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 3 }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
  },
  (t) => [
    uniqueIndex('api_keys_hash_uq').on(t.keyHash),
    index('api_keys_org_kind_idx').on(t.organizationId, t.kind),
    index('api_keys_agent_idx').on(t.agentId),
  ],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
