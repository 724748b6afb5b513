import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { answerOf, buttonsOf, DiscordHarness, EPHEMERAL } from './harness.js';

const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

let h: DiscordHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A server where each member's Discord is in their language, and the server's own (`guild_locale`) is set. */
async function server(): Promise<DiscordHarness> {
  return DiscordHarness.start({ partialImages: 0, limits: { userDailyUsd: 0.05 }, controls: { maxImagesPerJob: 2 } });
}

describe('a member’s language on Discord', () => {
  it('a German member in a German server: the refusals (plural, euro-style dollars), the finished job, the settings view and a change of setting, all in German; the log in English', async () => {
    h = await server();
    const de = { locale: 'de', guildLocale: 'de' };

    const tooMany = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'ein Fuchs', quality: 'low', count: 4 }, de));
    expect(tooMany.flags & EPHEMERAL).toBe(EPHEMERAL);
    expect(tooMany.content).toBe('✋ Hier sind höchstens 2 Bilder pro Auftrag möglich; fordere weniger an.');

    const tooDear = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'ein Fuchs', quality: 'high' }, de));
    // German writes dollars with a decimal comma and the sign after the amount: "0,050 $".
    expect(tooDear.content).toMatch(/^✋ Dieser Auftrag könnte bis zu 0,\d{3}\s\$ kosten, mehr als die 0,0500\s\$, die von deinem Tagesbudget von 0,0500\s\$ übrig sind \(ausgegeben: 0,00\s\$\);/);
    // The wait is the wall clock's (hours, or in the last hour before midnight UTC minutes and seconds).
    expect(tooDear.content).toMatch(/das Budget wird um 00:00 UTC \(in \d+ (Std|Min|Sek)\.( \d+ (Min|Sek)\.)?\) zurückgesetzt\.$/);

    const job = h.discord.slashCommand('imagine', { prompt: 'ein Fuchs', quality: 'low' }, de);
    const done = await h.finalReply(job);
    expect(done.flags & EPHEMERAL).toBe(0);
    expect(done.content).toMatch(/1024x1024 · low · png · 0,0\d{3}\s\$ · (\d+\sms|\d+(,\d)?\sSek\.)/);
    expect(buttonsOf(done).map((b) => b.label)).toEqual(['Neu erstellen', 'Bearbeiten', 'Löschen']);

    const settings = await answerOf(h, h.discord.slashCommand('imagine-admin settings', {}, { ...de, permissions: MANAGE_SERVER }));
    expect(settings.content.split('\n').slice(0, 3)).toEqual([
      'Einstellungen dieses Servers — woher jede stammt: Betreiber (die Umgebung des Bots), Admin (hier festgelegt), Standard.',
      '• Bot hier erlaubt: ja (Betreiber)',
      '• channels: jeder Kanal (Standard)',
    ]);
    // Setting names and values are typed as in English, whatever the language; the answer is German.
    const changed = await answerOf(h, h.discord.slashCommand('imagine-admin set', { setting: 'max-images', value: '1' }, { ...de, permissions: MANAGE_SERVER }));
    expect(changed.content).toBe('✅ max-images ist jetzt 1 (vorher der Standard).');
    const one = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'zwei Füchse', quality: 'low', count: 2 }, de));
    expect(one.content).toBe('✋ Hier ist höchstens 1 Bild pro Auftrag möglich; fordere weniger an.');

    const log = h.logger.text();
    expect(log).toContain('job completed');
    expect(log).not.toMatch(/Auftrag|Bilder|Einstellungen/);
  });

  it('a German admin is told the commands as their Discord lists them: /bild-admin set, /bild-admin style and /bild style:', async () => {
    h = await server();
    const admin = { locale: 'de', guildLocale: 'de', permissions: MANAGE_SERVER };

    const settings = await answerOf(h, h.discord.slashCommand('imagine-admin settings', {}, admin));
    expect(settings.content.split('\n').at(-1)).toBe('Ändere eine mit `/bild-admin set` (clear für den Standard; add oder remove für Listen).');
    const none = await answerOf(h, h.discord.slashCommand('imagine-admin styles', {}, admin));
    expect(none.content).toBe('Noch keine Hausstile; Admins legen einen mit `/bild-admin style` an.');
    const defined = await answerOf(h, h.discord.slashCommand('imagine-admin style', { name: 'aquarell', text: 'ein Aquarell von {prompt}' }, admin));
    expect(defined.content).toMatch(/Mitglieder wählen ihn mit `\/bild style:`\.$/);
    const listed = await answerOf(h, h.discord.slashCommand('imagine-admin styles', {}, admin));
    expect(listed.content.split('\n')[0]).toMatch(/Mitglieder wählen einen mit `\/bild style:`:$/);
    expect([settings, none, defined, listed].map((m) => m.content).join('\n')).not.toContain('imagine');
  });

  it('a Japanese member in a Japanese server: the refusals, the finished job and the settings view in Japanese', async () => {
    h = await server();
    const ja = { locale: 'ja', guildLocale: 'ja' };

    const tooMany = await answerOf(h, h.discord.slashCommand('imagine', { prompt: '狐', quality: 'low', count: 4 }, ja));
    expect(tooMany.content).toBe('✋ ここでは 1 件のジョブで作成できる画像は最大 2 枚です。枚数を減らしてください。');
    const tooDear = await answerOf(h, h.discord.slashCommand('imagine', { prompt: '狐', quality: 'high' }, ja));
    expect(tooDear.content).toMatch(/^✋ このジョブは最大 \$0\.\d{3} かかる可能性があり、あなたの1日の予算 \$0\.0500 の残り \$0\.0500 を超えます（使用済み \$0\.00）。/);

    const done = await h.finalReply(h.discord.slashCommand('imagine', { prompt: '狐', quality: 'low' }, ja));
    expect(done.content).toMatch(/1024x1024 · low · png · \$0\.0\d{3} · (\d+\sms|\d+(\.\d)? 秒)/);
    expect(buttonsOf(done).map((b) => b.label)).toEqual(['再生成', '編集', '削除']);

    const settings = await answerOf(h, h.discord.slashCommand('imagine-admin settings', {}, { ...ja, permissions: MANAGE_SERVER }));
    expect(settings.content.split('\n')[0]).toBe('このサーバーの設定 — それぞれの由来: 運営者（ボットの環境変数）、管理者（ここで設定）、既定値。');
    expect(settings.content).toContain('• channels: すべてのチャンネル（既定値）');
  });

  it('an English member sees English; a German member in an English server reads their private answers in German and the job’s public reply in the server’s English', async () => {
    h = await server();
    const english = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low', count: 4 }));
    expect(english.content).toBe('✋ At most 2 images per job can be made here; ask for fewer.');

    const visitor = { locale: 'de', guildLocale: 'en-US' };
    const refusal = await answerOf(h, h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low', count: 4 }, visitor));
    expect(refusal.content).toBe('✋ Hier sind höchstens 2 Bilder pro Auftrag möglich; fordere weniger an.');
    const done = await h.finalReply(h.discord.slashCommand('imagine', { prompt: 'a fox', quality: 'low' }, visitor));
    expect(buttonsOf(done).map((b) => b.label)).toEqual(['Reroll', 'Edit', 'Delete']);
    const usage = await answerOf(h, h.discord.slashCommand('imagine-usage', {}, visitor));
    expect(usage.content).toMatch(/^\*\*Deine Ausgaben\*\* \(UTC\): heute 0,0\d{3}\s\$ · diesen Monat 0,0\d{3}\s\$/);
  });
});
