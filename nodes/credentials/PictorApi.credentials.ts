import type { IAuthenticateGeneric, Icon, ICredentialTestRequest, ICredentialType, INodeProperties } from 'n8n-workflow';
import { PATHS } from 'pictor';

/**
 * The key and address of a Pictor (gpt-image-2 style) image service. There is
 * no public default host: the Base URL must be set (a local emulator such as
 * http://127.0.0.1:4010 works). Optionally a Redis where every process that
 * spends the key (n8n workers, Pictor bots) shares its rate limit and its
 * spending ledger, and caps on what the account may spend.
 */
export class PictorApi implements ICredentialType {
  name = 'pictorApi';

  displayName = 'Pictor API';

  icon: Icon = { light: 'file:../icons/pictor.svg', dark: 'file:../icons/pictor.dark.svg' };

  documentationUrl = 'https://github.com/pictor-project/pictor/tree/main/nodes#credentials-pictor-api';

  properties: INodeProperties[] = [
    {
      displayName: 'API Key',
      name: 'apiKey',
      type: 'string',
      typeOptions: { password: true },
      required: true,
      default: '',
      description: 'The key the image service issued to you. It is sent as "Authorization: Bearer <key>".',
    },
    {
      displayName: 'Base URL',
      name: 'baseUrl',
      type: 'string',
      required: true,
      default: '',
      placeholder: 'https://api.example.com',
      description:
        'Address of the image service, without /v1 (a trailing /v1 is tolerated by the node). There is no public default: set the one your provider gave you, or http://127.0.0.1:4010 for a local Pictor emulator.',
    },
    {
      displayName: 'Redis URL',
      name: 'redisUrl',
      type: 'string',
      // It can carry a password (redis://user:password@host:6379).
      typeOptions: { password: true },
      default: '',
      placeholder: 'redis://127.0.0.1:6379',
      description:
        "Optional. The service limits images per minute per API key, so processes that spend one key must share one limiter: n8n in queue mode (every worker runs executions), several n8n instances, or n8n next to the Pictor Discord/Slack bots. Give them all the same Redis (redis:// or rediss://, with user and password if it needs them) and they share the key's images per minute, concurrent requests and rate-limit pauses. Empty: only the executions of this n8n process share the limit.",
    },
    {
      displayName: 'Redis Key Prefix',
      name: 'redisPrefix',
      type: 'string',
      default: 'pictor',
      description:
        'Used only with a Redis URL: the name under which the limits of this API key are kept in Redis. Use one prefix per API key, the same in every n8n worker and bot that spends that key (the bots read it from PICTOR_REDIS_PREFIX). 1 to 64 letters, digits, _ . : or -.',
    },
    {
      displayName: 'Account Daily Cap (USD)',
      name: 'accountDailyUsd',
      type: 'string',
      default: '',
      placeholder: 'no cap',
      description:
        "Optional. The most the whole account (every workflow, and with a Redis URL every n8n process and Pictor bot sharing it) may spend per UTC day, in US dollars, e.g. 5 or 12.50. Each request is checked at the highest price it could cost before it is sent; a request over the cap fails its item with code budget_account_daily and nothing is sent. Empty: no cap; 0: nothing may be spent. The bots' PICTOR_ACCOUNT_DAILY_USD is the same cap.",
    },
    {
      displayName: 'Account Monthly Cap (USD)',
      name: 'accountMonthlyUsd',
      type: 'string',
      default: '',
      placeholder: 'no cap',
      description:
        'Optional. The same per UTC calendar month (resets at 00:00 UTC on the 1st). The bots\' PICTOR_ACCOUNT_MONTHLY_USD is the same cap.',
    },
    {
      displayName: 'Ledger Folder',
      name: 'ledgerFolder',
      type: 'string',
      default: '',
      placeholder: '~/.n8n/pictor',
      description:
        "Used only with a cap and without a Redis URL: the folder of the file where spending is counted (quota-ledger.json), shared by every n8n process on this machine that uses it. An absolute path (~ alone or a leading ~/ is the home folder of the user n8n runs as); a relative one is refused. Empty: pictor inside n8n's own folder (N8N_USER_FOLDER/.n8n, else ~/.n8n). With a Redis URL, spending is counted in Redis instead, under the Redis Key Prefix. The Pictor CLI (pictor usage, pictor console) shows it with PICTOR_DATA_DIR set to this folder.",
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: 'generic',
    properties: {
      headers: { Authorization: '=Bearer {{$credentials.apiKey.trim()}}' },
    },
  };

  /**
   * A request that costs nothing: a generation with an empty body. The service
   * checks the key first, so a good key gets 400 (missing prompt; nothing is
   * generated) and a bad one gets 401 `invalid_api_key`, which fails the test.
   */
  test: ICredentialTestRequest = {
    request: {
      baseURL: '={{ $credentials.baseUrl.replace(/\\/+$/, "").replace(/\\/v1$/, "") }}',
      url: PATHS.generations,
      method: 'POST',
      body: {},
      json: true,
      ignoreHttpStatusErrors: true,
    },
    rules: [
      {
        type: 'responseSuccessBody',
        properties: {
          key: 'error.code',
          value: 'invalid_api_key',
          message: 'The service refused this API key (401 invalid_api_key). Check the API key.',
        },
      },
    ],
  };
}
