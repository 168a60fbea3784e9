// Generates packages/client/src/generated/api.ts, the typed client's generated layer, from the OpenAPI document
// (openapi.json at the repository's root, which is what the service serves at /docs/openapi.json).
//
//   npm run client:generate            write the file
//   npm run client:generate -- --check exit 1 when the committed file differs from what the document gives
//
// test/client-types.e2e-spec.ts runs `generateClientTypes` on the document the service serves and compares.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import * as prettier from 'prettier';

const ROOT = new URL('../../', import.meta.url);
export const DOCUMENT_FILE = new URL('openapi.json', ROOT);
export const OUTPUT_FILE = new URL('packages/client/src/generated/api.ts', ROOT);

const HEADER = `/**
 * Generated from the OpenAPI document (openapi.json) by tools/client/generate.mjs: do not edit.
 * Run \`npm run openapi && npm run client:generate\` after a change of the API.
 */

`;

/**
 * The TypeScript of an OpenAPI document (the parsed JSON), formatted with the repository's Prettier settings so that
 * \`npm run format\` leaves the committed file as it is.
 */
export async function generateClientTypes(document) {
  const ast = await openapiTS(JSON.parse(JSON.stringify(document)), {
    // Keep what the document says is required: a schema default does not make a request field mandatory.
    defaultNonNullable: false,
    // An object schema without properties is any object (a tool call's `arguments`), not an empty one.
    emptyObjectsUnknown: true,
    silent: true,
  });
  const source = HEADER + astToString(ast);
  const config = (await prettier.resolveConfig(fileURLToPath(OUTPUT_FILE))) ?? {};
  return prettier.format(source, { ...config, parser: 'typescript' });
}

async function main() {
  const document = JSON.parse(await readFile(DOCUMENT_FILE, 'utf8'));
  const generated = await generateClientTypes(document);
  const target = fileURLToPath(OUTPUT_FILE);
  if (process.argv.includes('--check')) {
    const current = await readFile(target, 'utf8').catch(() => '');
    if (current !== generated) {
      console.error('packages/client/src/generated/api.ts is out of date: run `npm run client:generate`');
      process.exit(1);
    }
    console.log('packages/client/src/generated/api.ts is up to date');
    return;
  }
  await writeFile(target, generated);
  console.log(`packages/client/src/generated/api.ts written (${generated.length} characters)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
