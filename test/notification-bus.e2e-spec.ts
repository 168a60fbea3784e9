import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotificationBus, TransactionHost } from '#platform';
import { TestContext } from './support/app.js';
import { replicaHandle } from './support/database.js';

describe('notification bus', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    ctx = await TestContext.create();
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('opens one LISTEN connection per process on PostgreSQL, shared by every cache, and none on PGlite', async () => {
    if (ctx.db.driver === 'postgres') {
      const result = (await ctx.db.db.execute(
        sql`select query from pg_stat_activity where datname = current_database() and query ilike 'listen %'`,
      )) as unknown as { rows: { query: string }[] };
      expect(result.rows).toHaveLength(1);
      expect(NotificationBus.of(ctx.db).connections).toBe(1);
      expect(NotificationBus.of(ctx.db).isListening).toBe(true);
    } else {
      expect(NotificationBus.of(ctx.db).connections).toBe(0);
      expect(NotificationBus.of(ctx.db).crossProcess).toBe(false);
    }
  });

  it('delivers a committed notification to another replica, and nothing of a rolled-back one', async () => {
    const { handle, close } = await replicaHandle(ctx.db);
    try {
      const heard: string[] = [];
      const off = await NotificationBus.of(handle).subscribe('svc_test_channel', {
        onMessage: (payload) => heard.push(payload),
      });
      const tx = ctx.app.get(TransactionHost);
      const bus = NotificationBus.of(ctx.db);
      await tx.run(() => bus.notify(tx, 'svc_test_channel', 'committed'));
      await tx
        .run(async () => {
          await bus.notify(tx, 'svc_test_channel', 'rolled-back');
          throw new Error('roll back');
        })
        .catch(() => undefined);
      for (let i = 0; i < 100 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 50));
      expect(heard).toEqual(['committed']);
      await off();
    } finally {
      await close();
    }
  });
});
