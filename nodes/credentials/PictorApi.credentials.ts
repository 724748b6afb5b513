import type { IAuthenticateGeneric, Icon, ICredentialTestRequest, ICredentialType, INodeProperties } from 'n8n-workflow';
import { PATHS } from '../../src/spec/constants.js';

/**
 * The key and address of a Pictor (gpt-image-2 style) image service. There is
 * no public default host: the Base URL must be set (a local emulator such as
 * http://127.0.0.1:4010 works).
 */
export class PictorApi implements ICredentialType {
  name = 'pictorApi';

  displayName = 'Pictor API';

  icon: Icon = { light: 'file:../icons/pictor.svg', dark: 'file:../icons/pictor.dark.svg' };

  documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-pictor';

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
  ];

  authenticate: IAuthenticateGeneric = {
    type: 'generic',
    properties: {
      headers: { Authorization: '=Bearer {{$credentials.apiKey}}' },
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
