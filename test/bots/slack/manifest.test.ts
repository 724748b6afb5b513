import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { SHORTCUT_EDIT_IMAGE } from '../../../bots/slack/bot-context.js';
import { SLACK_BOT_SCOPES } from '../../../bots/slack/index.js';

type Manifest = {
  features: { slash_commands: { command: string; url?: string }[]; shortcuts: { type: string; callback_id: string }[] };
  oauth_config: { scopes: { bot: string[] }; redirect_urls?: string[] };
  settings: { event_subscriptions: { bot_events: string[]; request_url?: string }; interactivity: { is_enabled: boolean; request_url?: string }; socket_mode_enabled: boolean };
};

const load = async (name: string) => JSON.parse(await readFile(new URL(`../../../bots/slack/${name}`, import.meta.url), 'utf8')) as Manifest;

describe('the app manifests', () => {
  it('declare the commands, shortcut, events, interactivity and scopes the bot uses, for Socket Mode', async () => {
    const manifest = await load('manifest.json');
    expect(manifest.features.slash_commands.map((c) => c.command)).toEqual(['/imagine', '/imagine-edit']);
    expect(manifest.features.shortcuts).toEqual([expect.objectContaining({ type: 'message', callback_id: SHORTCUT_EDIT_IMAGE })]);
    // Mentions arrive as app_mention; only direct messages (no mention needed) need the message events.
    expect(manifest.settings.event_subscriptions.bot_events).toEqual(['app_mention', 'message.im']);
    expect(manifest.settings.interactivity.is_enabled).toBe(true);
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(manifest.oauth_config.scopes.bot).toEqual(
      expect.arrayContaining(['commands', 'chat:write', 'files:read', 'files:write', 'im:write', 'app_mentions:read', 'channels:history', 'groups:history', 'im:history', 'mpim:history']),
    );
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
});
