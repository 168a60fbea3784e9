import { readdirSync } from 'node:fs';
import { ErrorCode } from '#platform';

const root = new URL('../../', import.meta.url);

/**
 * The codes the code defines, read apart from the service's own registry (`knownErrorCodes`): the platform's
 * `ErrorCode` and each module's `<Module>ErrorCode` object of its `*.errors.ts`, found by file, so that a module added
 * later counts without touching the tests that compare against it.
 */
export async function definedErrorCodes(): Promise<Set<string>> {
  const codes = new Set<string>(Object.values(ErrorCode));
  const files = readdirSync(new URL('libs', root), { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.errors.ts'),
  );
  if (files.length < 10) throw new Error(`only ${files.length} *.errors.ts files found under libs/`);
  for (const file of files) {
    const module = (await import(new URL(`libs/${file}`, root).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (!name.endsWith('ErrorCode') || typeof value !== 'object' || value === null) continue;
      for (const code of Object.values(value)) if (typeof code === 'string') codes.add(code);
    }
  }
  return codes;
}
