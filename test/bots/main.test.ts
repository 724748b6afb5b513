import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PictorClient, ValidationError } from '../../src/index.js';
import { closeRedis, connectRedis } from '../../src/internal.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { startService } from '../../bots/main.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { unreachableSlackEnv } from '../helpers/service-fakes.js';
import { start } from '../helpers/npm-start.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';

describe('npm start', () => {
  it('with nothing configured, starts the emulator, prints its URL, an example and which variables turn on which surface', async () => {
    const lines: string[] = [];
    const service = await startService({ PICTOR_LOG_LEVEL: 'silent' }, (l) => lines.push(l));
    try {
      expect(service.emulatorUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const text = lines.join('\n');
      expect(text).toContain(service.emulatorUrl);
      expect(text).toContain('npm run pictor -- generate --prompt');
      expect(text).toContain('DISCORD_TOKEN');
      expect(text).toContain('SLACK_BOT_TOKEN');
      const client = new PictorClient({ baseURL: service.emulatorUrl, apiKey: DEV_API_KEY });
      expect((await client.generate({ prompt: 'it works', quality: 'low' })).data).toHaveLength(1);
    } finally {
      await service.stop();
    }
  });

  it("in a container, suggests the container's commands: node dist/… through docker compose exec, no npm script", async () => {
    const lines: string[] = [];
    const service = await startService({ PICTOR_LOG_LEVEL: 'silent', PICTOR_CONTAINER: '1' }, (l) => lines.push(l));
    await service.stop();
    const text = lines.join('\n');
    expect(text).toContain('Try, from the host: docker compose exec pictor node dist/cli/pictor.js generate --prompt');
    expect(text).toContain('register the commands once: node dist/bots/discord/deploy-commands.js in this container');
    expect(text).not.toContain('npm run');
  });

  it('logs human lines on a terminal, JSON elsewhere or when PICTOR_LOG_FORMAT=json', async () => {
    const logsOf = async (env: NodeJS.ProcessEnv, logToTerminal: boolean) => {
      const lines: string[] = [];
      const service = await startService({ PICTOR_LOG_LEVEL: 'debug', ...env }, () => {}, { logToTerminal, writeLog: (l) => lines.push(l) });
      await service.stop();
      return lines.filter((l) => l.includes('embedded emulator'));
    };
    const human = await logsOf({}, true);
    expect(human).toHaveLength(1);
    expect(human[0]).toMatch(/^\d\d:\d\d:\d\d DEBUG no PICTOR_BASE_URL: started an embedded emulator \(no money is spent\) \(url http:\/\/127\.0\.0\.1:\d+\)/);
    for (const json of [...(await logsOf({}, false)), ...(await logsOf({ PICTOR_LOG_FORMAT: 'json' }, true))]) {
      expect(JSON.parse(json)).toMatchObject({ level: 20, msg: 'no PICTOR_BASE_URL: started an embedded emulator (no money is spent)' });
    }
  });

  it('refuses to start on a bad setting, naming the variable', async () => {
    await expect(startService({ PICTOR_MAX_CONCURRENT: 'many' }, () => {})).rejects.toMatchObject({ code: 'validation_error', param: 'PICTOR_MAX_CONCURRENT' });
    await expect(startService({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_MODE: 'http' }, () => {})).rejects.toMatchObject({ param: 'SLACK_SIGNING_SECRET' });
  });

  it('refuses to start when REDIS_URL is set but Redis does not answer, without showing its password', async () => {
    const error = await startService({ REDIS_URL: 'redis://:hunter2-secret@127.0.0.1:9', PICTOR_LOG_LEVEL: 'silent' }, () => {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'connection_failed' });
    expect(String((error as Error).message)).not.toContain('hunter2-secret');
  });

  it('with a real service and no chat surface, says plainly that nothing is configured to run (exit 2) rather than sit idle', async () => {
    const lines: string[] = [];
    const error = await startService({ PICTOR_BASE_URL: 'http://127.0.0.1:9', PICTOR_API_KEY: 'k', PICTOR_LOG_LEVEL: 'silent' }, (l) => lines.push(l)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error).toMatchObject({ code: 'validation_error', param: 'DISCORD_TOKEN' });
    expect((error as Error).message).toBe(
      'nothing is configured to run: PICTOR_BASE_URL is set (so no emulator is started) and no chat surface is. ' +
        'Set DISCORD_TOKEN, or SLACK_BOT_TOKEN with SLACK_APP_TOKEN (or SLACK_SIGNING_SECRET and SLACK_MODE=http) — see .env.example — ' +
        'or unset PICTOR_BASE_URL to try the emulator. For one-off images use the pictor command.',
    );
    expect(lines).toEqual([]);
  });

  it('names the missing SLACK_BOT_TOKEN when only SLACK_APP_TOKEN is set', async () => {
    await expect(startService({ SLACK_APP_TOKEN: 'xapp-1-abc', PICTOR_LOG_LEVEL: 'silent' }, () => {})).rejects.toMatchObject({ param: 'SLACK_BOT_TOKEN' });
  });

  it('refuses to start a chat surface on an unreadable spend ledger with no backup, naming the file and what to do', async () => {
    const dataDir = await testTempDir('pictor-main-ledger-');
    await writeFile(join(dataDir, 'quota-ledger.json'), '{"version":2,"spent":{"2030-');
    const lines: string[] = [];
    const error = await startService(unreachableSlackEnv(dataDir), (l) => lines.push(l)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: join(dataDir, 'quota-ledger.json') });
    expect((error as Error).message).toMatch(/quota-ledger\.json is not JSON.*move it away/);
    expect(lines.join('\n')).not.toContain('online');
  });

  it('refuses to start a chat surface on a malformed cap-overrides.json with no backup, naming the file', async () => {
    const dataDir = await testTempDir('pictor-main-caps-');
    await writeFile(join(dataDir, 'cap-overrides.json'), '{"version":1,"scopes":{"slack:T1":{"userDailyUsd":{"usd":"lots"}}}}');
    const lines: string[] = [];
    const error = await startService(unreachableSlackEnv(dataDir), (l) => lines.push(l)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: join(dataDir, 'cap-overrides.json') });
    expect(lines.join('\n')).not.toContain('online');
  });

  it('puts back the backup of a damaged cap-overrides.json, and says so', async () => {
    const dataDir = await testTempDir('pictor-main-caps-');
    const good = '{"version":1,"scopes":{"slack:T1":{"userDailyUsd":{"usd":2,"by":"slack:U1","at":1}}}}';
    await writeFile(join(dataDir, 'cap-overrides.json.bak'), good);
    await writeFile(join(dataDir, 'cap-overrides.json'), '{"version":1,"sco');
    const lines: string[] = [];
    // The check passes; the start then stops at Slack (no fake here), after the ledger was opened.
    await startService(unreachableSlackEnv(dataDir), (l) => lines.push(l)).catch(() => undefined);
    expect(lines.join('\n')).toContain(`${join(dataDir, 'cap-overrides.json')} were unreadable: restored their backup copy`);
    expect(await readFile(join(dataDir, 'cap-overrides.json'), 'utf8')).toBe(good);
  });

  it('refuses to start a chat surface when its usage folder is not a folder, naming it', async () => {
    const dataDir = await testTempDir('pictor-main-usage-');
    await writeFile(join(dataDir, 'usage'), '');
    const error = await startService(unreachableSlackEnv(dataDir), () => {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: join(dataDir, 'usage') });
  });

  it('exits with code 2 naming the damaged ledger file, instead of going online', async () => {
    const dataDir = await testTempDir('pictor-main-exit-');
    await writeFile(join(dataDir, 'cap-overrides.json'), 'not json');
    // Its log at its usual level: an “online” line would show.
    const result = await start({ PICTOR_LOG_LEVEL: 'info', ...unreachableSlackEnv(dataDir) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(join(dataDir, 'cap-overrides.json'));
    expect(result.stdout).not.toContain('online');
  }, 60_000);

  it('refuses to start Discord with user installs and no DM budget, naming the variable, before Discord is asked anything', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-main-'));
    try {
      const env = { PICTOR_LOG_LEVEL: 'silent', PICTOR_DATA_DIR: dataDir, DISCORD_TOKEN: 'not-used-before-the-check', DISCORD_API_BASE_URL: 'http://127.0.0.1:9' };
      await expect(startService({ ...env, DISCORD_USER_INSTALLS: '1' }, () => {})).rejects.toMatchObject({ code: 'validation_error', param: 'PICTOR_DM_DAILY_USD' });
      // The DM caps are read once, by the runner's config, which names a bad one.
      await expect(startService({ ...env, DISCORD_USER_INSTALLS: '1', PICTOR_DM_DAILY_USD: 'abc' }, () => {})).rejects.toMatchObject({ param: 'PICTOR_DM_DAILY_USD' });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start when the Discord job store is garbage and has no backup, naming the file', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-main-'));
    try {
      await mkdir(join(dataDir, 'discord'), { recursive: true });
      const file = join(dataDir, 'discord', 'jobs.json');
      await writeFile(file, '{"version":1,"records":[{"ke');
      const error = await startService({ PICTOR_LOG_LEVEL: 'silent', PICTOR_DATA_DIR: dataDir, DISCORD_TOKEN: 'not-used-before-the-check' }, () => {}).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'job_store_unreadable', file });
      expect((error as Error).message).toContain('move it aside');
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

const redis = testRedis();

describe.skipIf(redis.skipReason)(`npm start with Slack OAuth and Redis ${redis.skipReason ? `(${redis.skipReason})` : ''}`, () => {
  it('prints the install address and keeps each installation in Redis under the prefix, not in the data folder', async () => {
    const url = requireRedisUrl(redis);
    const prefix = uniquePrefix('main-slack-oauth');
    const fake = await new FakeSlack().start();
    const dataDir = await mkdtemp(join(tmpdir(), 'pictor-main-oauth-'));
    const lines: string[] = [];
    const service = await startService(
      {
        PICTOR_LOG_LEVEL: 'silent',
        PICTOR_DATA_DIR: dataDir,
        REDIS_URL: url,
        PICTOR_REDIS_PREFIX: prefix,
        SLACK_MODE: 'http',
        SLACK_PORT: '0',
        SLACK_HOST: '127.0.0.1',
        SLACK_API_URL: fake.apiUrl,
        SLACK_SIGNING_SECRET: fake.signingSecret,
        SLACK_CLIENT_ID: fake.clientId,
        SLACK_CLIENT_SECRET: fake.clientSecret,
        SLACK_STATE_SECRET: 'a-state-secret-for-the-main-test',
      },
      (l) => lines.push(l),
    );
    const connection = await connectRedis(url);
    try {
      const installUrl = /Install it in a workspace: (\S+)/.exec(lines.join('\n'))?.[1];
      expect(installUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/slack\/install$/);
      const start = await fetch(installUrl!, { redirect: 'manual' });
      const back = fake.approveInstall(start.headers.get('location')!, { team: 'T0ALPHA', redirectUri: new URL('/slack/oauth_redirect', installUrl).toString() });
      expect((await fetch(back, { headers: { cookie: start.headers.get('set-cookie')!.split(';')[0]! } })).status).toBe(200);

      // A record of the bots' state, in the space that never expires.
      const saved = JSON.parse((await connection.get(`${prefix}:bots:slack-installations:r:team-T0ALPHA`))!) as { bot: { token: string } };
      expect(await connection.pttl(`${prefix}:bots:slack-installations:r:team-T0ALPHA`)).toBe(-1);
      expect(saved.bot.token).toBe(fake.workspaceOf('T0ALPHA')!.botToken);
      await expect(readdir(join(dataDir, 'slack', 'installations'))).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await service.stop();
      await closeRedis(connection);
      await deleteKeys(url, prefix);
      await fake.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
