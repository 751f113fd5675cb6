// ESLint flat config: typescript-eslint's recommended rules, no console in the service and the SDK.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  {
    files: ['server/**/*.ts', 'client/**/*.ts'],
    rules: { 'no-console': 'error' },
  },
);
