import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Libraries are imported through their public entries only: #platform, #identity, #governance (package.json
// `imports`). Refused in libs/ and apps/ (tests may reach inside): a relative path into another library, a path
// inside an entry (#platform/...), and another library's tables (*.schema files), which only its own services read.
// The first two exclude *.schema so that a table import gets the one message that says what to do instead.
const NOT_A_SCHEMA = '(?!.*\\.schema(\\.js)?$)';
const libraryBoundaries = (climbIntoLibrary) => [
  'error',
  {
    patterns: [
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
    ],
  },
];

export default tseslint.config(
  { ignores: ['bench/**/*.mjs', 'dist/**', 'node_modules/**', 'coverage/**', 'drizzle/**', '.data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: false },
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly' },
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
    // From libs/<name>/src/...: up and into a sibling's src/ (or an app's).
    files: ['libs/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-imports': libraryBoundaries('(\\.\\./)+((libs|apps)/)?[^./][^/]*/src(/|$)') },
  },
  {
    // From apps/<name>/src/...: up to the repository root and into libs/.
    files: ['apps/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: { 'no-restricted-imports': libraryBoundaries('(\\.\\./)+libs/') },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // Command-line tools (the route fuzzer) report on the console.
    files: ['tools/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
