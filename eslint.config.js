import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'nodes/dist/', 'nodes/node_modules/', '.cache/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', fetch: 'readonly', Request: 'readonly', Response: 'readonly', Headers: 'readonly', structuredClone: 'readonly', queueMicrotask: 'readonly', setImmediate: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-empty-function': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    // One-way layering inside the core: the spec, the core's rules and the client stand on nothing above them (the spend
    // guard, the CLI, the console, the emulator), so a money rule the client needs lives in src/core/pricing.ts.
    files: ['src/spec/**/*.ts', 'src/core/**/*.ts', 'src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ regex: '^\\.\\./(spend|cli|console|emulator|metrics)(/|$)', message: 'The spec, the core and the client import nothing above them: move the rule down (src/core/pricing.ts for a price).' }],
        },
      ],
    },
  },
  {
    // The surfaces stand on the core's two entries, by name: `pictor` (the public API) and `pictor/internal`
    // (what they share beyond it) — never a path into src/ or dist/ (src/README.md, "Entries").
    files: ['bots/**/*.ts', 'nodes/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(\\.\\./)+(src|dist)(/|$)', message: "Import the core by its name: 'pictor' (the public API) or 'pictor/internal'." },
            { regex: '^pictor/(?!internal$)', message: "The core's entries are 'pictor' and 'pictor/internal'." },
          ],
        },
      ],
    },
  },
);
