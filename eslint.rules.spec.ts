import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

// The library and module boundaries of eslint.config.mjs (@typescript-eslint/no-restricted-imports), run through ESLint's Node API on code that
// is not on disk: each case names the file it pretends to be.
const root = fileURLToPath(new URL('.', import.meta.url));

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({
    cwd: root,
    overrideConfigFile: fileURLToPath(new URL('eslint.config.mjs', import.meta.url)),
  });
});

/** The messages of the boundary rule for `code` linted as `filePath`. */
async function boundaryErrors(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages
    .filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports')
    .map((m) => m.message);
}

const RELATIVE = /through its public entry .*not a relative path/;
const DEEP_ALIAS = /not a path inside it/;
const TABLES = /Another library's tables are private/;
const MODULE_TABLES = /Another module's tables are private/;
const DIRECTION = /Libraries depend one way/;
const OWN_TABLES = /tables are read and written by its repositories: go through the module's repository/;

describe('library boundaries', () => {
  it('refuses a relative import that climbs into another library', async () => {
    const errors = await boundaryErrors(
      "export { AuditService } from '../../governance/src/audit/audit.service.js';\n" +
        "export { AppError } from '../../../platform/src/index.js';\n",
      'libs/identity/src/auth/x.ts',
    );
    expect(errors).toHaveLength(2);
    for (const e of errors) expect(e).toMatch(RELATIVE);
  });

  it('refuses an app reaching into libs/ by a relative path', async () => {
    const errors = await boundaryErrors(
      "export { PlatformModule } from '../../../libs/platform/src/index.js';\n",
      'apps/api/src/x.ts',
    );
    expect(errors).toEqual([expect.stringMatching(RELATIVE)]);
  });

  it('refuses a path inside an entry', async () => {
    const errors = await boundaryErrors(
      "export { AuditService } from '#governance/audit/audit.service.js';\n",
      'libs/identity/src/x.ts',
    );
    expect(errors).toEqual([expect.stringMatching(DEEP_ALIAS)]);
  });

  it("refuses another library's tables, by a relative path or through the alias, with one message", async () => {
    const errors = await boundaryErrors(
      "export { auditEntries } from '../../governance/src/audit/audit.schema.js';\n" +
        "export { apiKeys } from '#identity/api-keys/api-key.schema.js';\n",
      'libs/identity/src/x.ts',
    );
    expect(errors).toEqual([expect.stringMatching(TABLES), expect.stringMatching(TABLES)]);
  });

  it('accepts the public entries below, relative imports inside a module, and app composition', async () => {
    expect(
      await boundaryErrors(
        "export { SessionService } from '#identity';\n" +
          "export { AppError } from '#platform';\n" +
          "export { agents } from './agent.schema.js';\n" +
          "export { traces } from '../trace.schema.js';\n" +
          "export { AgentsRepository } from '../agents/agents.repository.js';\n",
        // A repository: elsewhere the module's own tables are refused too (below).
        'libs/governance/src/traces/dto/x.repository.ts',
      ),
    ).toEqual([]);
    expect(
      await boundaryErrors("export { AppModule } from '../../api/src/app.module.js';\n", 'apps/cli/src/x.ts'),
    ).toEqual([]);
  });

  it("refuses another module's tables inside a library, but not their row types", async () => {
    const errors = await boundaryErrors(
      "export { traces } from '../traces/trace.schema.js';\n" +
        "export { reviewItems } from '../../review/review-item.schema.js';\n" +
        "export type { TraceRow } from '../traces/trace.schema.js';\n" +
        "import type { PolicyRow } from '../policies/policy.schema.js';\n" +
        'export type P = PolicyRow;\n',
      'libs/governance/src/agents/x.ts',
    );
    expect(errors).toEqual([expect.stringMatching(MODULE_TABLES), expect.stringMatching(MODULE_TABLES)]);
  });

  it('treats the identity core (users, organizations, sessions, tokens, auth) as one module', async () => {
    const core =
      "export { users } from '../users/user.schema.js';\nexport { revokedTokens } from '../sessions/session.schema.js';\n";
    expect(await boundaryErrors(core, 'libs/identity/src/organizations/x.repository.ts')).toEqual([]);
    expect(await boundaryErrors(core, 'libs/identity/src/team/x.ts')).toEqual([
      expect.stringMatching(MODULE_TABLES),
      expect.stringMatching(MODULE_TABLES),
    ]);
  });

  it('refuses an import against the direction platform <- identity <- governance <- compliance', async () => {
    expect(
      await boundaryErrors(
        "export { SessionService } from '#identity';\nexport { AuditService } from '#governance';\n",
        'libs/platform/src/x.ts',
      ),
    ).toEqual([expect.stringMatching(DIRECTION), expect.stringMatching(DIRECTION)]);
    expect(
      await boundaryErrors("export { AuditService } from '#governance';\n", 'libs/identity/src/x.ts'),
    ).toEqual([expect.stringMatching(DIRECTION)]);
    expect(
      await boundaryErrors("export { SessionService } from '#identity';\n", 'libs/governance/src/x.ts'),
    ).toEqual([]);
  });

  it('leaves tests free to reach inside a library', async () => {
    expect(
      await boundaryErrors(
        "export { apiKeys } from '../../../identity/src/api-keys/api-key.schema.js';\n",
        'libs/governance/src/agents/x.spec.ts',
      ),
    ).toEqual([]);
  });

  it('fails `eslint .` on a violation: the rule is an error, not a warning', async () => {
    const [result] = await eslint.lintText("export { AppError } from '../../platform/src/index.js';\n", {
      filePath: 'libs/identity/src/x.ts',
    });
    expect(result!.errorCount).toBe(1);
  });
});

describe("a module's tables: read and written by its repositories", () => {
  it('refuses a service importing its own table', async () => {
    expect(
      await boundaryErrors(
        "import { webhooks } from './webhook.schema.js';\nexport const t = webhooks;\n",
        'libs/governance/src/webhooks/webhooks.service.ts',
      ),
    ).toEqual([expect.stringMatching(OWN_TABLES)]);
  });

  it('refuses a job and a worker importing their own tables, from a subfolder or across the identity core', async () => {
    expect(
      await boundaryErrors(
        "import { organizations } from './organization.schema.js';\n" +
          "import { users } from '../users/user.schema.js';\n" +
          'export const t = [organizations, users];\n',
        'libs/identity/src/organizations/organization-erasure.job.ts',
      ),
    ).toEqual([expect.stringMatching(OWN_TABLES), expect.stringMatching(OWN_TABLES)]);
    expect(
      await boundaryErrors(
        "export { traces } from '../trace.schema.js';\n",
        'libs/governance/src/traces/workers/x.worker.ts',
      ),
    ).toEqual([expect.stringMatching(OWN_TABLES)]);
  });

  it('refuses a value imported beside types from the table file', async () => {
    expect(
      await boundaryErrors(
        "import { type WebhookRow, webhooks } from './webhook.schema.js';\nexport const t: WebhookRow[] = [];\nexport const w = webhooks;\n",
        'libs/governance/src/webhooks/webhook-delivery.worker.ts',
      ),
    ).toEqual([expect.stringMatching(OWN_TABLES)]);
  });

  it('accepts a repository, a queries file, a table file and the library entry', async () => {
    const tables = "import { webhooks } from './webhook.schema.js';\nexport const t = webhooks;\n";
    for (const file of [
      'libs/governance/src/webhooks/webhooks.repository.ts',
      'libs/governance/src/webhooks/webhook.queries.ts',
      'libs/governance/src/webhooks/webhook-delivery.schema.ts',
    ]) {
      expect(await boundaryErrors(tables, file)).toEqual([]);
    }
    expect(
      await boundaryErrors("export * from './audit/audit.schema.js';\n", 'libs/platform/src/index.ts'),
    ).toEqual([]);
  });

  it('accepts type imports of the tables anywhere', async () => {
    expect(
      await boundaryErrors(
        "import type { WebhookRow } from './webhook.schema.js';\n" +
          "import { type WebhookDeliveryRow } from './webhook.schema.js';\n" +
          "export type { DeliveryStatus } from './webhook.schema.js';\n" +
          'export type R = WebhookRow | WebhookDeliveryRow;\n',
        'libs/governance/src/webhooks/webhooks.service.ts',
      ),
    ).toEqual([]);
  });

  it('accepts the allow-listed outbox, and only that file of its folder', async () => {
    const tables = "import { outboxMessages } from './outbox.schema.js';\nexport const t = outboxMessages;\n";
    expect(await boundaryErrors(tables, 'libs/platform/src/outbox/outbox.ts')).toEqual([]);
    expect(await boundaryErrors(tables, 'libs/platform/src/outbox/outbox-topics.ts')).toEqual([
      expect.stringMatching(OWN_TABLES),
    ]);
  });

  it("gives another module's and another library's tables their own message, once, type imports included", async () => {
    expect(
      await boundaryErrors(
        "import { traces } from '../traces/trace.schema.js';\n" +
          "import type { UserRow } from '../../../identity/src/users/user.schema.js';\n" +
          'export type U = UserRow;\nexport const t = traces;\n',
        'libs/governance/src/webhooks/webhooks.service.ts',
      ),
    ).toEqual([expect.stringMatching(MODULE_TABLES), expect.stringMatching(TABLES)]);
  });
});

/** The messages of `ruleId` for `code` linted as `filePath`. */
async function ruleErrors(ruleId: string, code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === ruleId).map((m) => m.message);
}

describe('one documentation decorator per route', () => {
  const controller = (route: string) =>
    "import { Controller, Get, HttpCode } from '@nestjs/common';\n" +
    "import { ApiTags } from '@nestjs/swagger';\n" +
    "import { Access, ApiErrors, ApiEnvelope, Endpoint } from '#platform';\n" +
    "@ApiTags('X')\n@Controller('x')\n@ApiErrors([401])\n@Access()\n" +
    `export class XController {\n  @Get()\n  @HttpCode(200)\n${route}\n  list() { return []; }\n}\n` +
    'export const unused = [ApiEnvelope];\n';

  it('refuses @Api* and @Access on a route method', async () => {
    const errors = await ruleErrors(
      'no-restricted-syntax',
      controller("  @Access({ roles: ['owner'] })\n  @ApiEnvelope(Object)\n  @ApiErrors([404])"),
      'libs/governance/src/x/x.controller.ts',
    );
    expect(errors).toHaveLength(3);
    for (const e of errors) expect(e).toMatch(/one @Endpoint/);
  });

  it('accepts @Endpoint beside HTTP decorators, and class-level documentation', async () => {
    const errors = await ruleErrors(
      'no-restricted-syntax',
      controller("  @Endpoint({ summary: 'List', access: {}, errors: [404] })"),
      'libs/identity/src/x/x.controller.ts',
    );
    expect(errors).toEqual([]);
  });
});

describe('test files', () => {
  it('refuses an end-to-end or medium file over 500 lines', async () => {
    const body = (lines: number) =>
      Array.from({ length: lines }, (_, i) => `export const v${i} = ${i};`).join('\n');
    expect(await ruleErrors('max-lines', body(501), 'test/x.e2e-spec.ts')).toHaveLength(1);
    expect(await ruleErrors('max-lines', body(501), 'test/medium/x.medium-spec.ts')).toHaveLength(1);
    expect(await ruleErrors('max-lines', body(500), 'test/x.e2e-spec.ts')).toEqual([]);
  });

  it('refuses vi.mock in a database-tier file outside test/own-module-graph.json', async () => {
    const code = "import { vi } from 'vitest';\nvi.mock('node:dns/promises');\n";
    expect(await ruleErrors('no-restricted-syntax', code, 'test/x.e2e-spec.ts')).toEqual([
      expect.stringMatching(/own-module-graph\.json/),
    ]);
    expect(await ruleErrors('no-restricted-syntax', code, 'test/openapi-examples.e2e-spec.ts')).toEqual([]);
  });
});
