/**
 * n8n-workflow as installed for nodes/ (a dev dependency of the node package,
 * hoisted into the root node_modules by the npm workspace). Tests import it from here so they
 * share the one module instance the node's source loads.
 */
export * from 'n8n-workflow';
