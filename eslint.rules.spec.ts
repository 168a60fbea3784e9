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
        'libs/governance/src/traces/dto/x.ts',
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
    expect(await boundaryErrors(core, 'libs/identity/src/organizations/x.ts')).toEqual([]);
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
