import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

// The dependency direction of docs/architecture.md#programs, enforced: programs → platform → crds.
const forbid = (...groups) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: groups.map((g) => ({
        group: [`**/${g}/**`, `**/${g}`],
        message: `This folder must not import ${g}/ (docs/architecture.md#programs).`,
      })),
    },
  ],
});

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', 'charts/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', '*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      complexity: ['error', 12],
      'max-depth': ['error', 3],
      'max-lines': ['warn', { max: 400, skipBlankLines: true, skipComments: true }],
      'no-console': 'error',
    },
  },
  { files: ['crds/**'], rules: forbid('platform', 'api', 'operator', 'runner', 'lake', 'egress', 'cli') },
  { files: ['platform/**'], rules: forbid('api', 'operator', 'runner', 'lake', 'egress', 'cli') },
  { files: ['api/**'], rules: forbid('operator', 'runner', 'lake', 'egress', 'cli') },
  { files: ['operator/**'], rules: forbid('api', 'runner', 'lake', 'egress', 'cli') },
  { files: ['runner/**', 'lake/**'], rules: forbid('api', 'operator', 'cli', 'egress') },
  { files: ['egress/**'], rules: forbid('api', 'operator', 'runner', 'lake', 'cli') },
  // The web pages talk to the server over HTTP only (docs/adr/0007-web-pages.md).
  {
    files: ['web/**'],
    rules: forbid('crds', 'platform', 'api', 'operator', 'runner', 'lake', 'egress', 'cli'),
  },
  { files: ['cli/**', 'scripts/**', 'bench/**'], rules: { 'no-console': 'off' } },
  {
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  prettier,
);
