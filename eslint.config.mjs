import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import ownModuleGraph from './test/own-module-graph.json' with { type: 'json' };

// Libraries are imported through their public entries only: #platform, #identity, #governance (package.json
// `imports`). Refused in libs/ and apps/ (tests may reach inside): a relative path into another library, a path
// inside an entry (#platform/...), another library's tables (*.schema files), which only its own services read, and
// an import against the direction platform <- identity <- governance <- compliance. The first two exclude *.schema
// so that a table import gets the one message that says what to do instead.
// Inside a library, a module's tables are private to it too: a relative path into a sibling module's *.schema is
// refused, unless it imports only types (a row's shape is not access to the table). The identity core is one module
// in several folders (identity-core.module.ts provides users, organizations, sessions, tokens and the login path).
// And within a module, its repositories own its tables: a value import of its own *.schema is refused everywhere but
// in the files of TABLE_OWNERS, so that services, jobs and workers go through a repository.
const NOT_A_SCHEMA = '(?!.*\\.schema(\\.js)?$)';
const LIBRARIES = ['platform', 'identity', 'governance', 'compliance'];
const IDENTITY_CORE = ['users', 'organizations', 'sessions', 'tokens', 'auth'];

const boundaryPatterns = (climbIntoLibrary) => [
  {
    regex: `^${NOT_A_SCHEMA}${climbIntoLibrary}`,
    message:
      'Import another library through its public entry (#platform, #identity, #governance), not a relative path.',
  },
  {
    regex: `^${NOT_A_SCHEMA}#[^/]+/`,
    message:
      "Import a library's public entry (#platform), not a path inside it; export what is needed from its index.",
  },
  {
    regex: `^(#|${climbIntoLibrary}).*\\.schema(\\.js)?$`,
    message: "Another library's tables are private to it: go through a service of its public entry.",
  },
];

/** A path that climbs out of this module into a sibling's folder (not out of the library), then to a *.schema. */
const siblingSchema = (sameModule) =>
  `(\\.\\./)+${sameModule.length ? `(?!(${sameModule.join('|')})/)` : ''}[^./][^/]*/(.*/)?[^/]*\\.schema(\\.js)?$`;

/** A sibling module's tables, by a path that climbs out of this module (not out of the library). */
const moduleSchemaPattern = (sameModule = []) => ({
  regex: `^(?!.*/src/)${siblingSchema(sameModule)}`,
  allowTypeImports: true,
  message:
    "Another module's tables are private to it: use its repository, service or exported query (its row types may be imported with `import type`).",
});

/**
 * The module's own tables: a relative path to a *.schema that does not climb into another folder, a sibling module's
 * or (through its src/) another library's, which have their own message, so an import gets one. Type imports stay
 * allowed: with `allowTypeImports`, a type import matching any pattern that allows it passes, which is why this one
 * must never match another library's tables.
 */
const ownSchemaPattern = (sameModule = []) => ({
  regex: `^(?!${siblingSchema(sameModule)})\\.\\.?/(.*/)?[^/]*\\.schema(\\.js)?$`,
  allowTypeImports: true,
  message:
    "A module's tables are read and written by its repositories: go through the module's repository (move the query into its *.repository.ts, or into a *.queries.ts for SQL that other modules embed); row types may be imported with `import type`.",
});

/**
 * Files that may import their module's tables: repositories, queries other modules embed, the tables themselves, a
 * library's entry (the platform's re-exports audit_entries for its reading side, the governance audit module's
 * repository), and ALLOWED_TABLE_USERS.
 */
const ALLOWED_TABLE_USERS = [
  // The transactional outbox is its table's repository: its statements (the claim with SKIP LOCKED, the lease, the
  // outcomes) are its mechanism, and its SQL builders (leasedInsertSql, recordOutcomesSql) are embedded by other
  // modules' statements.
  'libs/platform/src/outbox/outbox.ts',
];
const TABLE_OWNERS = [
  '**/*.repository.ts',
  '**/*.queries.ts',
  '**/*.schema.ts',
  'libs/*/src/index.ts',
  ...ALLOWED_TABLE_USERS,
];

/** The libraries above `library`, which it must not import. */
const directionPattern = (library) => {
  const above = LIBRARIES.slice(LIBRARIES.indexOf(library) + 1);
  return {
    regex: `^#(${above.join('|')})$`,
    message: `Libraries depend one way, platform <- identity <- governance <- compliance: ${library} must not import ${above.map((l) => `#${l}`).join(', ')}. Declare a port in ${library} and let the library above provide it.`,
  };
};

const LIBRARY_CLIMB = '(\\.\\./)+((libs|apps)/)?[^./][^/]*/src(/|$)';
const libraryRule = (library, sameModule, { ownTables = false } = {}) => [
  'error',
  {
    patterns: [
      ...boundaryPatterns(LIBRARY_CLIMB),
      moduleSchemaPattern(sameModule),
      ...(ownTables ? [ownSchemaPattern(sameModule)] : []),
      ...(library === 'compliance' ? [] : [directionPattern(library)]),
    ],
  },
];

/**
 * The rule for `files` of a library: the boundaries everywhere, and, in files outside TABLE_OWNERS, the module's own
 * tables as well. One rule list per file: flat config replaces a rule's options, it does not merge them.
 */
const libraryConfigs = (files, library, sameModule) => [
  {
    files,
    ignores: ['**/*.spec.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': libraryRule(library, sameModule) },
  },
  {
    files,
    ignores: ['**/*.spec.ts', ...TABLE_OWNERS],
    rules: {
      '@typescript-eslint/no-restricted-imports': libraryRule(library, sameModule, { ownTables: true }),
    },
  },
];

export default tseslint.config(
  {
    ignores: [
      'bench/**/*.mjs',
      'dist/**',
      '**/dist/**',
      'node_modules/**',
      'coverage/**',
      'drizzle/**',
      '.data/**',
      // Generated from openapi.json by openapi-typescript (npm run client:generate).
      'packages/client/src/generated/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: false },
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      // Modules add their error codes to the platform's registry by declaration merging: `interface X extends Y {}`.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      '@typescript-eslint/consistent-type-imports': 'off',
      'no-console': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  {
    // Command-line scripts run by CI and by hand (tools/artefact): they print, and use Node's fetch.
    files: ['tools/**/*.mjs'],
    languageOptions: { globals: { fetch: 'readonly' } },
    rules: { 'no-console': 'off' },
  },
  // From libs/<name>/src/...: up and into a sibling's src/ (or an app's); and the rules above, library by library.
  // The identity core comes last, so that its folders get its rules.
  ...LIBRARIES.flatMap((library) => libraryConfigs([`libs/${library}/**/*.ts`], library, [])),
  ...libraryConfigs(
    IDENTITY_CORE.map((folder) => `libs/identity/src/${folder}/**/*.ts`),
    'identity',
    IDENTITY_CORE,
  ),
  {
    // From apps/<name>/src/...: up to the repository root and into libs/.
    files: ['apps/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: boundaryPatterns('(\\.\\./)+libs/') },
      ],
    },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // A route says who may call it and what it answers in one @Endpoint (libs/platform/src/http/endpoint.ts), its
    // long text in the module's *.docs.ts; HTTP behaviour (@HttpCode, @Header) stays beside it. Class-level
    // decorators (@ApiTags, a controller-wide @ApiErrors or @Access) are not route methods' and stay allowed.
    files: ['libs/**/*.controller.ts', 'apps/**/*.controller.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            'MethodDefinition > Decorator > CallExpression[callee.name=/^(Access|Public|Roles|RequiresFeature|Api[A-Z][A-Za-z]*)$/]',
          message:
            'Document a route with one @Endpoint({ access, summary, description, params, success, errors }) instead; put its long text in the module’s *.docs.ts.',
        },
      ],
    },
  },
  {
    // The project's own size rule for test files (ARCHITECTURE.md, "Tests"): one file per behaviour, under 500 lines.
    files: ['test/**/*.e2e-spec.ts', 'test/**/*.medium-spec.ts'],
    rules: { 'max-lines': ['error', { max: 500, skipBlankLines: false, skipComments: false }] },
  },
  {
    // The database tiers share one module graph per Vitest worker (vitest.config.ts): a module replaced with
    // vi.mock would leak into the next file, or not apply at all. A file that must mock is listed in
    // test/own-module-graph.json and runs in a graph of its own.
    files: ['test/**/*.e2e-spec.ts', 'test/**/*.medium-spec.ts', 'test/support/**/*.ts'],
    ignores: ownModuleGraph,
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.object.name='vi'][callee.property.name=/^(mock|doMock|unmock|doUnmock)$/]",
          message:
            'The database tiers share one module graph per worker: list this file in test/own-module-graph.json (the e2e-isolated project) to mock a module.',
        },
      ],
    },
  },
  {
    // Command-line tools (the route fuzzer) and the examples, which a reader runs, report on the console.
    files: ['tools/**/*.ts', 'examples/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
