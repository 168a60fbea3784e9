import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

// The library boundaries of eslint.config.mjs (no-restricted-imports), run through ESLint's Node API on code that
// is not on disk: each case names the file it pretends to be.
const root = fileURLToPath(new URL('.', import.meta.url));

let eslint: ESLint;
beforeAll(() => {
  eslint = new ESLint({
    cwd: root,
    overrideConfigFile: fileURLToPath(new URL('eslint.config.mjs', import.meta.url)),
  });
});

/** The messages of no-restricted-imports for `code` linted as `filePath`. */
async function boundaryErrors(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const RELATIVE = /through its public entry .*not a relative path/;
const DEEP_ALIAS = /not a path inside it/;
const TABLES = /tables are private/;

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

  it('accepts the public entries, relative imports inside a library (tables included) and app composition', async () => {
    expect(
      await boundaryErrors(
        "export { AuditService } from '#governance';\n" +
          "export { AppError } from '#platform';\n" +
          "export { users } from '../users/user.schema.js';\n" +
          "export { SessionService } from '../sessions/session.service.js';\n",
        'libs/identity/src/auth/x.ts',
      ),
    ).toEqual([]);
    expect(
      await boundaryErrors("export { AppModule } from '../../api/src/app.module.js';\n", 'apps/cli/src/x.ts'),
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
