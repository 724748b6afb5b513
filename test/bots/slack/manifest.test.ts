import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { QUALITIES, SIZES } from '../../../src/index.js';
import { WORKFLOW_STEP_ID } from '../../../bots/slack/listeners/workflow-step.js';
import { describe, expect, it } from 'vitest';
import { SHORTCUT_EDIT_IMAGE } from '../../../bots/slack/bot-context.js';
import { SLACK_BOT_SCOPES } from '../../../bots/slack/index.js';

type Manifest = {
  features: { slash_commands: { command: string; url?: string; should_escape?: boolean }[]; shortcuts: { type: string; callback_id: string }[] };
  oauth_config: { scopes: { bot: string[] }; redirect_urls?: string[] };
  settings: { event_subscriptions: { bot_events: string[]; request_url?: string }; interactivity: { is_enabled: boolean; request_url?: string }; socket_mode_enabled: boolean };
};

const load = async (name: string) => JSON.parse(await readFile(new URL(`../../../bots/slack/${name}`, import.meta.url), 'utf8')) as Manifest;

describe('the app manifests', () => {
  it('declare the commands, shortcut, events, interactivity and scopes the bot uses, for Socket Mode', async () => {
    const manifest = await load('manifest.json');
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(['/imagine', '/imagine-edit']);
    expect(manifest.features.shortcuts).toEqual([expect.objectContaining({ type: 'message', callback_id: SHORTCUT_EDIT_IMAGE })]);
    // Mentions arrive as app_mention; only direct messages (no mention needed) need the message events; then the Home tab and the workflow step.
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(['app_mention', 'message.im', 'app_home_opened', 'function_executed']);
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(manifest.oauth_config.scopes.bot).toEqual(
      expect.arrayContaining(['commands', 'chat:write', 'files:read', 'files:write', 'im:write', 'app_mentions:read', 'channels:history', 'groups:history', 'im:history', 'mpim:history']),
    );
  });

  it('have Slack send channels, members, user groups and links in the commands’ text as its mentions (`<#C…|name>`), which admin commands read ids from', async () => {
    for (const manifest of [await load('manifest.json'), await load('manifest.http.json')]) {
      expect(manifest.features.slash_commands.map((c) => [c.command, c.should_escape])).toEqual([
        ['/imagine', true],
        ['/imagine-edit', true],
      ]);
    }
  });

  it('ask for nothing the README does not explain', async () => {
    const readme = await readFile(new URL('../../../bots/slack/README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### What the app asks for, and why'));
    for (const manifest of [await load('manifest.json'), await load('manifest.http.json')]) {
      for (const item of [...manifest.oauth_config.scopes.bot, ...manifest.settings.event_subscriptions.bot_events]) expect(section).toContain(`| \`${item}\` |`);
    }
  });

  it('ask for the scopes an OAuth install asks for, and give HTTP the OAuth redirect and the uninstall events', async () => {
    const http = await load('manifest.http.json');
    expect(http.oauth_config.scopes.bot).toEqual([...SLACK_BOT_SCOPES]);
    expect(http.oauth_config.redirect_urls).toEqual([expect.stringMatching(/^https:\/\/.+\/slack\/oauth_redirect$/)]);
    expect(http.settings.event_subscriptions.bot_events).toEqual(expect.arrayContaining(['app_uninstalled', 'tokens_revoked']));
  });

  it('differ for HTTP only in the request URLs, Socket Mode, and OAuth’s redirect and uninstall events', async () => {
    const socket = await load('manifest.json');
    const http = await load('manifest.http.json');
    expect(http.settings.socket_mode_enabled).toBe(false);
    const urls = [http.settings.event_subscriptions.request_url, http.settings.interactivity.request_url, ...http.features.slash_commands.map((c) => c.url)];
    expect(new Set(urls).size).toBe(1);
    expect(urls[0]).toMatch(/^https:\/\/.+\/slack\/events$/);
    const strip = (m: Manifest) =>
      JSON.parse(
        JSON.stringify(m, (key, value: unknown) =>
          key === 'url' || key === 'request_url' || key === 'socket_mode_enabled' || key === 'redirect_urls'
            ? undefined
            : key === 'bot_events'
              ? (value as string[]).filter((e) => e !== 'app_uninstalled' && e !== 'tokens_revoked')
              : value,
        ),
      ) as unknown;
    expect(strip(http)).toEqual(strip(socket));
  });

  it('follow Slack’s manifest schema (version 2) in every part Pictor uses: settings, the Home tab, the functions and their parameters', async () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(MANIFEST_V2);
    for (const name of ['manifest.json', 'manifest.http.json']) {
      const manifest = await load(name);
      expect(validate(manifest), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
    // The schema itself refuses what Slack refuses (so the check above is no rubber stamp).
    const broken = JSON.parse(JSON.stringify(await load('manifest.json'))) as { functions: Record<string, { input_parameters: { properties: Record<string, { type: string }> } }>; settings: Record<string, unknown> };
    broken.functions.generate_image!.input_parameters.properties.channel!.type = 'slack#/types/channel';
    broken.settings.home_tab_enabled = true;
    expect(validate(broken)).toBe(false);
    expect(ajv.errorsText(validate.errors)).toMatch(/must be equal to one of the allowed values|must NOT have additional properties/);
  });

  it('declare the Workflow Builder step the bot answers, with the home tab and the events it needs', async () => {
    for (const name of ['manifest.json', 'manifest.http.json']) {
      const manifest = (await load(name)) as unknown as StepManifest;
      expect(manifest._metadata.major_version).toBe(2);
      expect(manifest.settings.function_runtime).toBe('remote');
      expect(manifest.settings.org_deploy_enabled).toBe(true);
      expect(manifest.features.app_home.home_tab_enabled).toBe(true);
      expect(manifest.settings.event_subscriptions.bot_events).toEqual(expect.arrayContaining(['app_home_opened', 'function_executed']));
      const step = manifest.functions[WORKFLOW_STEP_ID]!;
      expect(Object.keys(step.input_parameters.properties)).toEqual(['prompt', 'channel', 'user', 'size', 'quality', 'count', 'style']);
      expect(step.input_parameters.required).toEqual(['prompt', 'channel', 'user']);
      // Whom the step runs for is Slack's to say (the person who used the workflow), never a builder's pick.
      expect(step.input_parameters.properties.user).toMatchObject({ type: 'slack#/types/user_context' });
      // The choices are the spec's, as the bot checks them.
      expect(step.input_parameters.properties.size!.enum).toEqual([...SIZES]);
      expect(step.input_parameters.properties.quality!.enum).toEqual([...QUALITIES]);
      expect(Object.keys(step.output_parameters.properties)).toEqual(['file_ids', 'permalinks', 'message_link', 'cost_usd']);
    }
  });
});

type Parameters = { properties: Record<string, { type?: string; enum?: string[] }>; required: string[] };
type StepManifest = {
  _metadata: { major_version: number };
  settings: { function_runtime: string; org_deploy_enabled: boolean; event_subscriptions: { bot_events: string[] } };
  features: { app_home: { home_tab_enabled: boolean } };
  functions: Record<string, { input_parameters: Parameters; output_parameters: Parameters }>;
};

/** The types a function parameter may have (Slack's manifest schema v2, `slack-functions.parameter`). */
const PARAMETER_TYPES = [
  'integer', 'number', 'boolean', 'string', 'object', 'array',
  'slack#/types/user_context', 'slack#/types/user_permission', 'slack#/types/user_id', 'slack#/types/channel_id', 'slack#/types/usergroup_id',
  'slack#/types/timestamp', 'slack#/types/blocks', 'slack#/types/credential/oauth2', 'slack#/types/date', 'slack#/types/interactivity',
  'slack#/types/rich_text', 'slack#/types/form_input', 'slack#/types/form_input_object', 'slack#/types/message_ts', 'slack#/types/message_context',
];

const parameter = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: PARAMETER_TYPES },
    title: { type: 'string' },
    description: { type: 'string' },
    hint: { type: 'string' },
    is_required: { type: 'boolean' },
    is_hidden: { type: 'boolean' },
    items: { type: 'object', required: ['type'], properties: { type: { enum: PARAMETER_TYPES } } },
  },
};

const parameters = {
  type: 'object',
  required: ['properties'],
  additionalProperties: false,
  properties: {
    properties: { type: 'object', maxProperties: 50, additionalProperties: parameter },
    required: { type: 'array', items: { type: 'string' } },
  },
};

/**
 * The parts of Slack's app manifest schema (version 2, as Slack publishes it for editors and the CLI) that Pictor's
 * manifests use, written out from it: unknown settings and Home tab fields, a function without its title,
 * description or parameters, and a parameter of a type Slack does not have, are refused as Slack refuses them.
 */
const MANIFEST_V2 = {
  type: 'object',
  required: ['display_information'],
  properties: {
    _metadata: { type: 'object', additionalProperties: false, properties: { major_version: { type: 'integer' }, minor_version: { type: 'integer' } } },
    display_information: {
      type: 'object',
      required: ['name'],
      properties: { name: { type: 'string', minLength: 1, maxLength: 35 }, description: { type: 'string', maxLength: 140 }, long_description: { type: 'string', minLength: 174, maxLength: 4000 }, background_color: { type: 'string', pattern: '^#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?$' } },
    },
    settings: {
      type: 'object',
      additionalProperties: false,
      properties: {
        allowed_ip_address_ranges: { type: 'array' },
        event_subscriptions: {
          type: 'object',
          additionalProperties: false,
          properties: { request_url: { type: 'string' }, bot_events: { type: 'array', items: { type: 'string' } }, user_events: { type: 'array', items: { type: 'string' } }, metadata_subscriptions: { type: 'array' } },
        },
        incoming_webhooks: { type: 'object' },
        interactivity: { type: 'object', required: ['is_enabled'], additionalProperties: false, properties: { is_enabled: { type: 'boolean' }, request_url: { type: 'string' }, message_menu_options_url: { type: 'string' } } },
        org_deploy_enabled: { type: 'boolean' },
        socket_mode_enabled: { type: 'boolean' },
        is_hosted: { type: 'boolean' },
        token_rotation_enabled: { type: 'boolean' },
        siws_links: { type: 'object' },
        hermes_app_type: { type: 'string' },
        function_runtime: { type: 'string' },
        is_mcp_enabled: { type: 'boolean' },
      },
    },
    features: {
      type: 'object',
      properties: {
        app_home: { type: 'object', additionalProperties: false, properties: { home_tab_enabled: { type: 'boolean' }, messages_tab_enabled: { type: 'boolean' }, messages_tab_read_only_enabled: { type: 'boolean' } } },
        bot_user: { type: 'object', required: ['display_name'], properties: { display_name: { type: 'string', maxLength: 80 }, always_online: { type: 'boolean' } } },
        shortcuts: { type: 'array', items: { type: 'object', required: ['name', 'type', 'callback_id', 'description'] } },
        slash_commands: { type: 'array', items: { type: 'object', required: ['command', 'description'] } },
      },
    },
    oauth_config: { type: 'object', properties: { scopes: { type: 'object', properties: { bot: { type: 'array', items: { type: 'string' } } } }, redirect_urls: { type: 'array', items: { type: 'string' } } } },
    functions: {
      type: 'object',
      maxProperties: 50,
      additionalProperties: {
        type: 'object',
        required: ['title', 'description', 'input_parameters', 'output_parameters'],
        additionalProperties: false,
        properties: { title: { type: 'string' }, description: { type: 'string' }, input_parameters: parameters, output_parameters: parameters },
      },
    },
  },
};
