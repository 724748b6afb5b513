import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../../bots/discord/deploy-commands.js';
import { INVITE_PERMISSIONS, inviteLink } from '../../../bots/discord/index.js';
import { FakeDiscord } from '../../fakes/discord/FakeDiscord.js';

async function deploy(env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(env, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('npm run discord:deploy', () => {
  it('says in one line that a malformed token is wrong, exit 2, without a stack trace', async () => {
    const { code, err } = await deploy({ DISCORD_TOKEN: 'abc' });
    expect(code).toBe(2);
    expect(err).toHaveLength(1);
    expect(err[0]).toContain('DISCORD_TOKEN');
    expect(err[0]).not.toContain('\n');
  });

  it('says in one line, without the token, when the token cannot even be sent', async () => {
    const token = 'MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.abc\ndef.ghijklmnopqrst';
    const { code, err } = await deploy({ DISCORD_TOKEN: token, DISCORD_API_BASE_URL: 'http://127.0.0.1:9' });
    expect(code).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).not.toContain('\n');
    expect(err[0]).not.toContain('ghijklmnop');
  });
});

describe('npm run discord:deploy against Discord', () => {
  it('names DISCORD_TOKEN when Discord refuses the token (401), without repeating it', async () => {
    const discord = await FakeDiscord.start();
    try {
      const token = 'MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.wrong.token-of-another-bot';
      const { code, err } = await deploy({ DISCORD_TOKEN: token, DISCORD_API_BASE_URL: discord.apiBaseUrl, DISCORD_APPLICATION_ID: discord.applicationId });
      expect(code).toBe(1);
      expect(err).toEqual(['Could not register the commands: Discord did not accept DISCORD_TOKEN (401 Unauthorized): copy it again, or Bot → Reset Token in the Developer Portal.']);
    } finally {
      await discord.close();
    }
  });

  it('registers the commands and prints the ready-to-click invite link of the application', async () => {
    const discord = await FakeDiscord.start();
    try {
      const { code, out } = await deploy({ DISCORD_TOKEN: discord.botToken, DISCORD_API_BASE_URL: discord.apiBaseUrl });
      expect(code).toBe(0);
      expect(out.at(-1)).toBe(`Invite the bot to a server: ${inviteLink(discord.applicationId)}`);
    } finally {
      await discord.close();
    }
  });

  it('registers the commands for servers only unless DISCORD_USER_INSTALLS=1, which adds user installs and DMs to all but /imagine-admin', async () => {
    const discord = await FakeDiscord.start();
    try {
      const env = { DISCORD_TOKEN: discord.botToken, DISCORD_API_BASE_URL: discord.apiBaseUrl };
      expect((await deploy(env)).code).toBe(0);
      const off = discord.commands.get('global')!;
      for (const command of off) {
        expect(command.integration_types ?? [0]).toEqual([0]);
        expect(command.contexts).toEqual([0]);
      }

      // Not without a DM budget: anyone who installs the app would spend the account.
      const unbudgeted = await deploy({ ...env, DISCORD_USER_INSTALLS: '1' });
      expect(unbudgeted.code).toBe(2);
      expect(unbudgeted.err.join('\n')).toContain('PICTOR_DM_DAILY_USD');

      const on = await deploy({ ...env, DISCORD_USER_INSTALLS: '1', PICTOR_DM_DAILY_USD: '1' });
      expect(on.code).toBe(0);
      expect(on.out.some((line) => line.includes('User Install'))).toBe(true);
      const byName = new Map(discord.commands.get('global')!.map((c) => [c.name as string, c]));
      for (const name of ['imagine', 'edit', 'Edit image', 'imagine-usage', 'imagine-history', 'imagine-settings']) {
        expect(byName.get(name)).toMatchObject({ integration_types: [0, 1], contexts: [0, 1, 2] });
      }
      expect(byName.get('imagine-admin')!.contexts).toEqual([0]);
      expect(byName.get('imagine-admin')!.integration_types ?? [0]).toEqual([0]);
    } finally {
      await discord.close();
    }
  });

  it('registers each command’s name, description, options and choices in German, French, Spanish (Spain and Latin America), Brazilian Portuguese and Japanese, as Discord takes them', async () => {
    const discord = await FakeDiscord.start();
    try {
      expect((await deploy({ DISCORD_TOKEN: discord.botToken, DISCORD_API_BASE_URL: discord.apiBaseUrl })).code).toBe(0);
      const byName = new Map(discord.commands.get('global')!.map((c) => [c.name as string, c]));
      expect(byName.get('imagine')).toMatchObject({
        name_localizations: { de: 'bild', fr: 'imaginer', 'es-ES': 'imaginar', 'es-419': 'imaginar', 'pt-BR': 'imaginar', ja: '画像生成' },
        description_localizations: { de: 'Bilder aus einer Textbeschreibung zeichnen', ja: 'テキストの説明から画像を描きます' },
      });
      expect(byName.get('Edit image')).toMatchObject({ name_localizations: { de: 'Bild bearbeiten', fr: 'Modifier l’image', ja: '画像を編集' } });
      expect(byName.get('imagine-usage')!.name_localizations).toMatchObject({ de: 'bild-verbrauch', 'pt-BR': 'imaginar-uso' });
      const options = byName.get('imagine')!.options as { name: string; description_localizations?: Record<string, string>; choices?: { name: string; name_localizations?: Record<string, string>; value: string }[] }[];
      // Option names stay the ones the runner's refusals name (`format`, `count`); their descriptions and choices are translated.
      expect(options.map((o) => o.name)).toEqual(['prompt', 'size', 'quality', 'background', 'format', 'count', 'style', 'private']);
      expect(options.find((o) => o.name === 'size')!.choices!.find((c) => c.value === '1536x1024')).toMatchObject({
        name: '1536x1024 landscape',
        name_localizations: { de: '1536x1024 Querformat', ja: '1536x1024 横長' },
      });
      expect(options.find((o) => o.name === 'quality')!.description_localizations!.fr).toBe('Une meilleure qualité coûte plus cher et prend plus de temps');
      expect(options.find((o) => o.name === 'private')!.description_localizations!.de).toBe('Nur du siehst den Auftrag und seine Bilder (wenn dieser Server es erlaubt)');
      // A member's own defaults: a command of its own, its options named as on /imagine, its choices and descriptions translated.
      const settings = byName.get('imagine-settings')!;
      expect((settings.options as { name: string }[]).map((o) => o.name)).toEqual(['size', 'quality', 'format', 'count', 'private', 'previews', 'clear']);
      const clear = (settings.options as typeof options).find((o) => o.name === 'clear')!;
      expect(clear.choices!.find((c) => c.value === 'all')).toMatchObject({ name: 'all of them', name_localizations: { de: 'alle', ja: 'すべて' } });
    } finally {
      await discord.close();
    }
  });

  it('is refused by Discord (the stand-in follows its rules) for a localized name that is not lowercase, or a description past 100 characters', async () => {
    const discord = await FakeDiscord.start();
    try {
      const put = (commands: unknown) =>
        fetch(`${discord.apiBaseUrl}/v10/applications/${discord.applicationId}/commands`, {
          method: 'PUT',
          headers: { authorization: `Bot ${discord.botToken}`, 'content-type': 'application/json' },
          body: JSON.stringify(commands),
        });
      const wrong = await put([{ name: 'imagine', description: 'Draw', name_localizations: { de: 'Bild' } }]);
      expect(wrong.status).toBe(400);
      expect(((await wrong.json()) as { code: number }).code).toBe(50035);
      expect((await put([{ name: 'imagine', description: 'x'.repeat(101) }])).status).toBe(400);
      expect((await put([{ name: 'imagine', description: 'Draw', name_localizations: { 'de-DE': 'bild' } }])).status).toBe(400);
      expect((await put([{ name: 'imagine', description: 'Draw', name_localizations: { de: 'bild', ja: '画像生成' } }])).status).toBe(200);
    } finally {
      await discord.close();
    }
  });

  it('refuses a .env line that is not NAME=value with exit 2, naming the line by its number, registering nothing', async () => {
    const discord = await FakeDiscord.start();
    const dir = await mkdtemp(join(tmpdir(), 'pictor-deploy-'));
    try {
      await writeFile(join(dir, '.env'), `DISCORD_TOKEN=${discord.botToken}\nthe token of the test bot\nDISCORD_GUILD_ID=204567890123456789\nDISCORD_API_BASE_URL=${discord.apiBaseUrl}\n`);
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DISCORD_')));
      const { stderr, code } = await new Promise<{ stderr: string; code: number | null }>((resolve) => {
        execFile(process.execPath, [fileURLToPath(new URL('../../../dist/bots/discord/deploy-commands.js', import.meta.url))], { cwd: dir, env }, (error, _stdout, stderr) =>
          resolve({ stderr, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0 }),
        );
      });
      expect(code).toBe(2);
      expect(stderr).toMatch(/\bline 2\b/);
      expect(stderr).not.toMatch(/\n\s+at /);
      expect(discord.commands.size).toBe(0);
    } finally {
      await discord.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads DISCORD_TOKEN and DISCORD_GUILD_ID from .env in the folder it is run from, as npm start does', async () => {
    const discord = await FakeDiscord.start();
    const dir = await mkdtemp(join(tmpdir(), 'pictor-deploy-'));
    try {
      const guildId = '204567890123456789';
      await writeFile(join(dir, '.env'), `DISCORD_TOKEN=${discord.botToken}\nDISCORD_GUILD_ID=${guildId}\nDISCORD_API_BASE_URL=${discord.apiBaseUrl}\n`);
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DISCORD_')));
      const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve) => {
        execFile(process.execPath, [fileURLToPath(new URL('../../../dist/bots/discord/deploy-commands.js', import.meta.url))], { cwd: dir, env }, (error, stdout, stderr) =>
          resolve({ stdout, stderr, code: error ? (typeof error.code === 'number' ? error.code : 1) : 0 }),
        );
      });
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout).toContain(`in server ${guildId}`);
      expect(discord.commands.get(guildId)?.length).toBeGreaterThan(0);
    } finally {
      await discord.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the invite link', () => {
  it('asks for the bot and its commands, with the permissions the README documents (274877959168), computed from their names', () => {
    const link = new URL(inviteLink('104567890123456789'));
    expect(link.origin + link.pathname).toBe('https://discord.com/oauth2/authorize');
    expect(link.searchParams.get('client_id')).toBe('104567890123456789');
    expect(link.searchParams.get('scope')).toBe('bot applications.commands');
    expect(link.searchParams.get('permissions')).toBe('274877959168');
    expect(INVITE_PERMISSIONS.toArray()).toEqual(['ViewChannel', 'SendMessages', 'EmbedLinks', 'AttachFiles', 'SendMessagesInThreads']);
    expect(link.href).toContain('scope=bot+applications.commands&permissions=274877959168');
  });
});
