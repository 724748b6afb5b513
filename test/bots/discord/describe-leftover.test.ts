import { describe, expect, it } from 'vitest';
import { COMMAND_NAMES } from '../../../bots/discord/command-words.js';
import { say } from '../../../bots/runner/index.js';

describe('what a job its process left says', () => {
  it('says a stopped job cannot run again, and where to start a new one, when it offers no Retry', () => {
    expect(say('en', 'discord.job.interrupted_no_retry', COMMAND_NAMES)).toBe('🔌 This job stopped when the bot restarted, and it cannot run again: start a new one with /imagine or /edit.');
  });

  it('tells the member who pressed Cancel that the job’s end is being shown, here or in a new message, when a sweep is showing it', () => {
    expect(say('en', 'discord.button.being_shown')).toBe('This job’s end is being shown now, here or in a new message.');
  });

  it('tells the member who pressed Cancel to press it again when the job’s message could not be updated', () => {
    expect(say('en', 'discord.button.not_updated')).toBe('This job’s message could not be updated just now; press Cancel again in a moment.');
  });

  it('tells a member outside servers that the admin command works only inside a server the bot is in, and that there is no server history there', () => {
    expect(say('en', 'discord.admin.outside_servers', COMMAND_NAMES)).toBe(
      '/imagine-admin only works inside a server the bot is in. Here (a DM, a group DM, or a server where only you added the app) there is no server budget, setting or style to change.',
    );
    expect(say('en', 'history.outside_servers', { icon: '✋', ...COMMAND_NAMES })).toBe(
      '✋ There is no server history here: outside the servers the bot is in (a DM, a group DM, a server where only you added the app), /imagine-history shows only your own jobs.',
    );
    expect(say('es', 'discord.admin.outside_servers', COMMAND_NAMES)).toContain('un MD grupal');
    expect(say('pt-BR', 'discord.admin.outside_servers', COMMAND_NAMES)).toContain('uma DM em grupo');
  });

  it.each(['discord.job.interrupted_no_retry', 'discord.job.result_gone', 'discord.button.too_old', 'discord.edit.image_gone'] as const)(
    'names in %s the commands as the reader’s Discord shows them, in every language',
    (key) => {
      expect(say('de', 'discord.button.too_old', COMMAND_NAMES)).toBe('Dieser Auftrag ist zu alt: Ich habe nicht mehr, was er braucht. Starte einen neuen mit /bild oder /bearbeiten.');
      expect(say('ja', 'discord.edit.image_gone', COMMAND_NAMES)).toBe('その画像はもう保持していません。新しい画像を編集するか、ファイルを添えて /画像編集 を使ってください。');
      for (const locale of ['de', 'fr', 'es', 'pt-BR', 'ja']) {
        const said = say(locale, key, COMMAND_NAMES);
        expect(said).toContain(`/${say(locale, 'discord.command.edit.name')}`);
        expect(said).not.toMatch(/\/(imagine|edit)\b/);
      }
    },
  );
});
