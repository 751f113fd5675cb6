// ESLint flat config: type-aware strict and stylistic rules on the service, the SDK, the schemas, the UI and
// the tests; the recommended rules elsewhere (bench, examples); no console in the service and the SDK.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const TYPED = ['server/**/*.ts', 'client/**/*.ts', 'schemas/**/*.ts', 'ui/**/*.ts', 'test/**/*.ts'];

export default tseslint.config(
  { ignores: ['dist/**', 'client/dist/**', 'node_modules/**', 'coverage/**', 'bench/results/**', '**/*.tmp.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  ...[...tseslint.configs.strictTypeChecked, ...tseslint.configs.stylisticTypeChecked].map((config) => ({ ...config, files: TYPED })),
  {
    files: TYPED,
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Numbers in messages are fine; objects, undefined and null are what this rule is for.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // An empty environment variable or header means "unset": `||` on strings says so on purpose.
      '@typescript-eslint/prefer-nullish-coalescing': ['error', { ignorePrimitives: { string: true } }],
      // It rewrites `as T` into `!`, which no-non-null-assertion (strict) then forbids.
      '@typescript-eslint/non-nullable-type-assertion-style': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Fastify reads an async plugin or handler as "returns its result", awaited or not.
    files: ['server/http/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    files: ['server/**/*.ts', 'client/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
);
