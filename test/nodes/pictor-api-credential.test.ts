import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PictorApi } from '../../nodes/credentials/PictorApi.credentials.js';
import { PictorImage } from '../../nodes/nodes/PictorImage/PictorImage.node.js';
import { credentialProblem, ledgerFolderOf } from '../../nodes/nodes/PictorImage/pictor-credentials.js';
import { DEFAULT_REDIS_PREFIX } from '../../src/core/redis-config.js';
import { createEmulator, DEV_API_KEY, type Emulator, type EmulatorServer } from '../../src/emulator/index.js';
import { Workflow, type IAuthenticateGeneric, type INode, type INodeTypes, type IRequestOptionsSimplified } from './n8n-workflow.js';

/**
 * The credential test request, resolved with n8n-workflow's own expression
 * engine (as n8n's credential tester does with `$credentials`) and sent to the
 * emulator: a good key must pass n8n's rules, a bad key must fail them, and
 * nothing may be generated.
 */
let emulator: Emulator;
let server: EmulatorServer;

beforeAll(async () => {
  emulator = createEmulator();
  server = await emulator.listen({ port: 0 });
});
afterAll(async () => {
  await emulator.close();
});

const credential = new PictorApi();
const nodeType = new PictorImage();
const node: INode = { id: 'n', name: 'Pictor Image', type: 'CUSTOM.pictorImage', typeVersion: 1, position: [0, 0], parameters: {} };
const nodeTypes: INodeTypes = {
  getByName: () => nodeType,
  getByNameAndVersion: () => nodeType,
  getKnownTypes: () => ({}),
};
const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });

function resolve(value: unknown, credentials: Record<string, unknown>): unknown {
  if (typeof value !== 'string' || !value.startsWith('=')) return value;
  // What n8n's CredentialsHelper.resolveValue does.
  return workflow.expression.getSimpleParameterValue(node, value, 'internal', { $credentials: credentials } as never, undefined, '');
}

/** Runs the credential's test the way n8n does; returns n8n's verdict and what the service answered. */
async function testCredential(credentials: { apiKey: string; baseUrl: string }) {
  const { request, rules } = credential.test;
  const auth = (credential.authenticate as IAuthenticateGeneric).properties.headers as Record<string, string>;
  const headers = Object.fromEntries(Object.entries(auth).map(([k, v]) => [k, String(resolve(v, credentials))]));
  const url = `${String(resolve(request.baseURL, credentials))}${request.url}`;
  const answer = await fetch(url, {
    method: request.method,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify((request as IRequestOptionsSimplified).body),
  });
  const body = (await answer.json()) as Record<string, unknown>;
  const at = (path: string) => path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), body);
  // n8n: with ignoreHttpStatusErrors the answer is not thrown; each responseSuccessBody rule that matches fails the test.
  const failed = (rules ?? []).find((rule) => rule.type === 'responseSuccessBody' && at(rule.properties.key) === rule.properties.value);
  return { status: answer.status, verdict: failed ? { status: 'Error', message: failed.properties.message } : { status: 'OK' } };
}

describe('the Pictor API credential', () => {
  it('passes its test with a good key, without generating anything', async () => {
    const result = await testCredential({ apiKey: DEV_API_KEY, baseUrl: server.url });
    expect(result).toEqual({ status: 400, verdict: { status: 'OK' } });
    expect(emulator.stats().imagesGenerated).toBe(0);
  });

  it('fails its test with a clear message on a bad key', async () => {
    const result = await testCredential({ apiKey: 'wrong-key', baseUrl: server.url });
    expect(result.status).toBe(401);
    expect(result.verdict).toEqual({ status: 'Error', message: expect.stringMatching(/refused this API key/) });
  });

  it('tests the key pasted with a space or a line break around it as the node sends it: the key itself', async () => {
    expect(resolve((credential.authenticate as IAuthenticateGeneric).properties.headers!.Authorization, { apiKey: ' k-123\n' })).toBe('Bearer k-123');
  });

  it('tolerates a Base URL given with a trailing /v1/', async () => {
    const result = await testCredential({ apiKey: DEV_API_KEY, baseUrl: `${server.url}/v1/` });
    expect(result).toEqual({ status: 400, verdict: { status: 'OK' } });
  });

  it('sends the key as a Bearer header and keeps it in a password field', () => {
    expect(resolve((credential.authenticate as IAuthenticateGeneric).properties.headers!.Authorization, { apiKey: 'k-123' })).toBe('Bearer k-123');
    expect(credential.properties.find((p) => p.name === 'apiKey')).toMatchObject({ typeOptions: { password: true }, required: true });
    expect(credential.properties.find((p) => p.name === 'baseUrl')).toMatchObject({ default: '', required: true, placeholder: 'https://api.example.com' });
  });

  it('has an optional Redis URL in a password field, since it can carry a password, and says why to set it', () => {
    const field = credential.properties.find((p) => p.name === 'redisUrl');
    expect(field).toMatchObject({ displayName: 'Redis URL', type: 'string', default: '', typeOptions: { password: true } });
    expect(field?.required).not.toBe(true);
    expect(field?.description).toMatch(/queue mode/);
    expect(field?.description).toMatch(/Pictor Discord\/Slack bots/);
  });

  it('defaults the Redis Key Prefix to the core’s prefix and asks for one per API key', () => {
    const field = credential.properties.find((p) => p.name === 'redisPrefix');
    expect(field).toMatchObject({ displayName: 'Redis Key Prefix', default: DEFAULT_REDIS_PREFIX });
    expect(field?.description).toMatch(/one prefix per API key/);
  });
});

describe('the Ledger Folder', () => {
  it('reads ~ alone and a leading ~/ as the home folder of the user n8n runs as, an absolute path as typed, empty as none', () => {
    const of = (ledgerFolder: string) => ledgerFolderOf({ apiKey: 'sk-x', baseUrl: '', ledgerFolder }, '/home/node');
    expect(of('~')).toBe('/home/node');
    expect(of('~/.n8n/pictor')).toBe('/home/node/.n8n/pictor');
    expect(of('/srv/pictor')).toBe('/srv/pictor');
    expect(of('  ')).toBeUndefined();
  });
});

describe('a credential whose API key was pasted into another field', () => {
  // A key of no known shape, with characters a Redis Key Prefix may not hold, so the prefix is refused.
  const key = 'Zq8vR2mT5x/W9kL3nP7b+Y4cF6hJ1dG0sA==';

  it('never shows the key in the Redis Key Prefix error, which still names the field', () => {
    const problem = credentialProblem({ apiKey: key, baseUrl: 'https://api.example.com', redisUrl: 'redis://127.0.0.1:6379', redisPrefix: key });
    expect(problem).toMatchObject({ field: 'redisPrefix', message: expect.stringMatching(/^Pictor API credential: the Redis Key Prefix .* is not valid/) });
    expect(problem!.message).not.toContain(key);
  });

  it('still quotes a plain wrong Redis Key Prefix', () => {
    const problem = credentialProblem({ apiKey: key, baseUrl: 'https://api.example.com', redisUrl: 'redis://127.0.0.1:6379', redisPrefix: 'my prefix' });
    expect(problem!.message).toContain('"my prefix"');
  });
});
