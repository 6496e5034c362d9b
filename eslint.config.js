// Lint runs as part of `npm test`; rules stay syntax-level so the whole tree lints in seconds.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', fetch: 'readonly', performance: 'readonly', setImmediate: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // `interface ServiceErrorCodes extends Record<Code, true> {}`: each service's codes merged into AppError's type.
      '@typescript-eslint/no-empty-object-type': ['error', { allowInterfaces: 'with-single-extends' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read settings through the service config schema.' }],
    },
  },
  {
    // The config loaders, scripts and test support are the only places allowed to read the environment.
    files: ['**/src/config.ts', '**/src/config/**', 'scripts/**', 'bench/**', '**/src/testing/**', '**/*.test.ts', '**/src/server.ts', '**/src/admin.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
