// ESLint flat config: typescript-eslint's type-checked recommendations on the TypeScript sources
// (src/, test/, ormconfig.ts), ESLint's recommendations on the plain JavaScript (bench/, scripts/),
// formatting left to Prettier (eslint-config-prettier turns the stylistic rules off).
import { existsSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

// The import boundaries between areas live in their own file, owned by the table-ownership work.
const boundaries = existsSync(new URL('./eslint.boundaries.mjs', import.meta.url)) ? (await import('./eslint.boundaries.mjs')).default : [];

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', 'data/**', '.cache/**', 'bench/results/**'] },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
    rules: { 'no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }] },
  },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // the same convention as tsc's noUnusedParameters: a leading underscore marks a name a signature requires
      // rejecting with the error a callback handed over (unknown) is passing it on, not inventing a non-Error reason
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // API specs read JSON answers: supertest's res.body is `any`, and what a body holds is checked at run time
    // (expectSchema against the OpenAPI document, toEqual on values); typing every body statically would only
    // add casts. The promise rules (no-floating-promises, no-misused-promises) stay on in tests.
    files: ['test/**/*.ts', 'src/**/*.spec.ts'],
    rules: {
      // a callback that must return a promise (a lock's critical section, a stub handler) is written async
      '@typescript-eslint/require-await': 'off',
      // jest's spies and destructured module functions (`const { join } = await import('node:path')`) are the
      // usual false positives here
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  ...boundaries,
  prettier,
);
