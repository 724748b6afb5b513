/**
 * n8n-workflow as installed in nodes/ (a dev dependency of the node package;
 * the root package does not depend on it). Tests import it from here so they
 * share the one module instance the node's source loads.
 */
export * from '../../nodes/node_modules/n8n-workflow/dist/esm/index.js';
