// n8n's community-node lint rules (the self-hosted set: runtime dependencies are
// allowed, since the node needs bottleneck and the core client), laid out like
// @n8n/node-cli's own config.
import js from '@eslint/js';
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import tseslint from 'typescript-eslint';

const community = n8nCommunityNodesPlugin.configs.recommendedWithoutN8nCloudSupport;
const selfHosted = {
  // A self-hosted package: bottleneck, undici, zod, eventsource-parser and ioredis are real dependencies.
  '@n8n/community-nodes/no-runtime-dependencies': 'off',
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'scripts/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommended, community],
    rules: { ...selfHosted, 'no-console': 'error' },
  },
  {
    files: ['package.json'],
    extends: [community],
    plugins: { 'n8n-nodes-base': n8nNodesBase },
    rules: { ...n8nNodesBase.configs.community.rules, ...selfHosted },
    languageOptions: { parser: tseslint.parser, parserOptions: { extraFileExtensions: ['.json'] } },
  },
  {
    files: ['credentials/**/*.ts'],
    plugins: { 'n8n-nodes-base': n8nNodesBase },
    rules: {
      ...n8nNodesBase.configs.credentials.rules,
      'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
      'n8n-nodes-base/cred-class-field-type-options-password-missing': 'off',
      // The Redis URL is masked: redis://user:password@host carries the Redis password, though its name says "url".
      // (Off here rather than in an inline comment, which the repository's own lint, without this plugin, rejects.)
      '@n8n/community-nodes/credential-unnecessary-password': 'off',
    },
  },
  {
    files: ['nodes/**/*.ts'],
    plugins: { 'n8n-nodes-base': n8nNodesBase },
    rules: {
      ...n8nNodesBase.configs.nodes.rules,
      'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
      'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
      'n8n-nodes-base/node-param-type-options-max-value-present': 'off',
    },
  },

);
