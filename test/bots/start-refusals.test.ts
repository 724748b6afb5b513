import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { OPERATOR_FIX_CODES, operatorMustFix } from '../../src/internal.js';
import { StateRecordsUnreadableError } from '../../bots/state/FileStateStore.js';
import { HistoryUnreadableError, JobStoreUnreadableError, OldFileUnreadableError, UpgradeHeldError } from '../../bots/state/upgrade.js';
import { LedgerBusyError, LedgerUnreadableError } from '../../src/spend/errors.js';
import { FileLockBusyError, LOCK_WAIT_MS } from '../../src/spend/file-lock.js';
import { ConnectionError, ValidationError } from '../../src/index.js';
import { FakeDiscord, buttonsOf } from '../fakes/discord/FakeDiscord.js';
import { FakeSlack } from '../fakes/slack/FakeSlack.js';
import { start, startRunning } from '../helpers/npm-start.js';
import { useEmulator } from '../helpers/emulator.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { slackEventsUrl, surfaceEnv } from '../helpers/service-fakes.js';
import { hasButton } from './slack/harness.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { GatewayLease, gatewayLeaseKey } from '../../bots/discord/gateway-lease.js';
import { closeRedis, connectRedis } from '../../src/core/redis-connection.js';
import { silentLogger } from '../../src/internal.js';
import { withTimeout } from '../../src/core/with-timeout.js';

const redisSetup = testRedis();
const emu = useEmulator();

const REPO = fileURLToPath(new URL('../../', import.meta.url));

async function fakeDiscord(): Promise<FakeDiscord> {
  const discord = await FakeDiscord.start();
  onTestFinished(() => discord.close());
  return discord;
}

/**
 * Every class declared in the TypeScript sources under `dirs` whose name ends in `UnreadableError`, with the code its
 * heritage gives (`extends PictorError<'code'>`), or, for one that gives none as a literal there, what it extends.
 */
function unreadableErrorClasses(dirs: string[]): { name: string; where: string; code: string }[] {
  const found: { name: string; where: string; code: string }[] = [];
  const visit = (file: ts.SourceFile, node: ts.Node) => {
    if (ts.isClassDeclaration(node) && node.name?.text.endsWith('UnreadableError')) {
      const base = node.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
      const argument = base?.typeArguments?.length === 1 ? base.typeArguments[0] : undefined;
      const literal = base?.expression.getText(file) === 'PictorError' && argument && ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal) ? argument.literal.text : undefined;
      found.push({ name: node.name.text, where: `${relative(REPO, file.fileName)}: ${node.name.text}`, code: literal ?? `(no code: extends ${base?.getText(file) ?? 'nothing'})` });
    }
    ts.forEachChild(node, (child) => visit(file, child));
  };
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'node_modules') walk(path);
      else if (entry.name.endsWith('.ts')) {
        const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
        visit(file, file);
      }
    }
  };
  for (const dir of dirs) walk(dir);
  return found;
}

async function fakeSlack(): Promise<FakeSlack> {
  const slack = await new FakeSlack().start();
  onTestFinished(() => slack.close());
  return slack;
}


describe('npm start with a .env line that is not NAME=value', () => {
  it('exits 2 naming the .env file and the line number, not the line, before anything starts', async () => {
    const dir = await testTempDir('pictor-start-env-');
    await writeFile(join(dir, '.env'), 'PICTOR_ACCOUNT_DAILY_USD=1\nDaily cap for the team xoxb-secret-words\nPICTOR_USER_DAILY_USD=0.01\n');
    const result = await start({}, { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(join(dir, '.env'));
    expect(result.stderr).toMatch(/\bline 2\b/);
    expect(result.stderr).not.toContain('xoxb-secret-words');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('what decides that a refused start is the operator’s to fix (exit 2) rather than one that could not start (exit 1)', () => {
  it.each([
    ['a setting', new ValidationError('PICTOR_BASE_URL', 'PICTOR_BASE_URL must be an http(s) URL')],
    ['an unreadable ledger file', new LedgerUnreadableError('/data/quota-ledger.json', 'is not JSON')],
    ['an unreadable Discord job store of an older version', new JobStoreUnreadableError('/data/discord/jobs.json')],
    ['an unreadable history of an older version', new HistoryUnreadableError('/data/history.json')],
    ['a file of an older version the bot cannot read', new OldFileUnreadableError('/data/discord/jobs.json', Object.assign(new Error('denied'), { code: 'EACCES' }))],
    ['state records the bot cannot read', new StateRecordsUnreadableError('slack-requests', '/data/slack/requests', ['/data/slack/requests/a.json'], Object.assign(new Error('denied'), { code: 'EACCES' }))],
  ])('%s is the operator’s to fix', (_, error) => {
    expect(operatorMustFix(error)).toBe(true);
  });

  it.each([
    ['Redis or the network gone', new ConnectionError('cannot use Redis at redis://localhost:6379')],
    ['a ledger busy a moment', new LedgerBusyError(new FileLockBusyError('/data/quota-ledger.json.lock', 'pid 7', LOCK_WAIT_MS))],
    ['another replica holding the upgrade', new UpgradeHeldError('pictor:bots:upgrading', 300_000)],
    ['an error that is none of the project’s', new Error('could not log in to Discord: connect ECONNREFUSED 127.0.0.1:443')],
    ['something thrown that is not an error', 'validation_error'],
  ])('%s is not', (_, error) => {
    expect(operatorMustFix(error)).toBe(false);
  });

  // The one marker must not be forgotten: an error class named for a file it cannot read is a project error whose
  // code, given as `PictorError<'its_code'>` (the code its constructor must pass), is among them. Read from each
  // class's own declaration, so a class whose code is not a literal there, or that is no project error, fails too.
  it('knows every error code the sources give a class named …UnreadableError', () => {
    const found = unreadableErrorClasses([join(REPO, 'src'), join(REPO, 'bots')]);
    expect(found.map((c) => c.name)).toEqual(expect.arrayContaining(['LedgerUnreadableError', 'JobStoreUnreadableError', 'HistoryUnreadableError', 'StateRecordsUnreadableError']));
    for (const { where, code } of found) expect(OPERATOR_FIX_CODES, where).toContain(code);
  });
});

// Every row of README's troubleshooting table that names an exit code at start.
describe('npm start refused by a setting, as README’s troubleshooting table says', () => {
  it('exits 2 naming PICTOR_BASE_URL when it is not an http(s) URL', async () => {
    const result = await start({ PICTOR_BASE_URL: 'ftp://images.example.com', PICTOR_API_KEY: 'k', PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^pictor: PICTOR_BASE_URL must be an http\(s\) URL/);
  }, 60_000);

  it('exits 2 naming PICTOR_API_KEY when PICTOR_BASE_URL is set without it', async () => {
    const result = await start({ PICTOR_BASE_URL: 'https://images.example.com', PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^pictor: PICTOR_BASE_URL is set but PICTOR_API_KEY is not/);
  }, 60_000);

  it('exits 2 naming SLACK_APP_TOKEN when Socket Mode has none', async () => {
    const result = await start({ SLACK_BOT_TOKEN: 'xoxb-1', PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^pictor: SLACK_APP_TOKEN is needed in Socket Mode/);
  }, 60_000);

  it('exits 2 naming PICTOR_DATA_DIR and its bots.lock when a folder is in the lock’s place', async () => {
    const dataDir = await testTempDir('pictor-start-');
    await mkdir(join(dataDir, 'bots.lock'));
    const result = await start({ SLACK_BOT_TOKEN: 'xoxb-1', SLACK_APP_TOKEN: 'xapp-1', PICTOR_DATA_DIR: dataDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^pictor: PICTOR_DATA_DIR ${dataDir}: ${join(dataDir, 'bots.lock')} is not a file`));
  }, 60_000);

  it('exits 2 naming SLACK_BOT_TOKEN when Slack refuses the token, never printing it', async () => {
    const slack = await fakeSlack();
    const token = 'xoxb-not-the-one-slack-issued';
    const result = await start({ ...surfaceEnv({ slack }), SLACK_BOT_TOKEN: token, PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('pictor: Slack did not accept the bot token (invalid_auth); check SLACK_BOT_TOKEN\n');
    expect(result.stdout + result.stderr).not.toContain(token);
  }, 60_000);

  it.each([
    ['on the gateway', (_: FakeDiscord) => ({})],
    ['with interactions over HTTP', (discord: FakeDiscord) => ({ DISCORD_INTERACTIONS_PORT: '0', DISCORD_INTERACTIONS_HOST: '127.0.0.1', DISCORD_PUBLIC_KEY: discord.publicKeyHex })],
  ])('exits 2 naming DISCORD_TOKEN when Discord refuses the token (%s), never printing it', async (_, mode) => {
    const discord = await fakeDiscord();
    const token = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.not-the-one.discord-issued-it';
    const result = await start({ ...surfaceEnv({ discord }), ...mode(discord), DISCORD_TOKEN: token, PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('pictor: Discord did not accept the bot token (401 Unauthorized); check DISCORD_TOKEN (copy it again, or Bot → Reset Token in the Developer Portal)\n');
    expect(result.stdout + result.stderr).not.toContain(token);
  }, 60_000);
  it('exits 2 naming DISCORD_TOKEN when Discord’s gateway closes the login with 4004 Authentication failed, never printing the token', async () => {
    const discord = await fakeDiscord();
    discord.refuseGatewayIdentifies();
    const env = surfaceEnv({ discord });
    const result = await start({ ...env, PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('pictor: Discord did not accept the bot token (gateway close 4004 Authentication failed); check DISCORD_TOKEN (copy it again, or Bot → Reset Token in the Developer Portal)\n');
    expect(result.stdout + result.stderr).not.toContain(env.DISCORD_TOKEN);
  }, 60_000);
});

describe.skipIf(redisSetup.skipReason)('npm start standing by for Discord’s gateway (another replica holds it)', () => {
  it('exits 2 naming DISCORD_TOKEN, as at start, when it takes over and Discord’s gateway refuses the token (4004, reset since), never printing it', async () => {
    const url = requireRedisUrl(redisSetup);
    const prefix = uniquePrefix('start-standby-refused');
    const redis = await connectRedis(url);
    onTestFinished(async () => {
      await deleteKeys(url, prefix);
      await closeRedis(redis);
    });
    const discord = await fakeDiscord();
    const env = surfaceEnv({ discord });
    // The other replica: holds the gateway lease of this bot until the token is reset.
    const key = gatewayLeaseKey(env.DISCORD_TOKEN!, prefix);
    const holder = new GatewayLease({ redis, key, logger: silentLogger() });
    expect(await holder.tryAcquire()).toBe(true);
    holder.keep(() => {});
    const exited = start({ ...env, REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix, PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    // Standing by: its mark in Redis, set at each try for the lease.
    await vi.waitFor(async () => expect(await redis.get(`${key}:standby`)).not.toBeNull(), { timeout: 30_000, interval: 100 });
    discord.refuseGatewayIdentifies();
    await holder.release();
    const result = await exited;
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('pictor: Discord did not accept the bot token (gateway close 4004 Authentication failed); check DISCORD_TOKEN (copy it again, or Bot → Reset Token in the Developer Portal)\n');
    expect(result.stdout + result.stderr).not.toContain(env.DISCORD_TOKEN);
    // Exited after one refused IDENTIFY on one connection: it did not try again meanwhile.
    expect(discord.gatewayStats.identifies).toBe(0);
    expect(discord.gatewayStats.refusedIdentifies).toBe(1);
    expect(discord.gatewayStats.connections).toBe(1);
  }, 60_000);

  it('prints only the refused token, and exits 2, when another part of the start fails after it (Slack out of reach): the first failure decides', async () => {
    const url = requireRedisUrl(redisSetup);
    const prefix = uniquePrefix('start-standby-refused-then-slack');
    const redis = await connectRedis(url);
    onTestFinished(async () => {
      await deleteKeys(url, prefix);
      await closeRedis(redis);
    });
    const discord = await fakeDiscord();
    // A Slack Web API that holds every call until told to fail them all (500): Slack's start waits meanwhile.
    const held: ServerResponse[] = [];
    let failing = false;
    const slackApi = createServer((_req, res) => {
      if (failing) res.writeHead(500).end();
      else held.push(res);
    });
    await new Promise<void>((resolve) => slackApi.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => new Promise<void>((resolve) => slackApi.close(() => resolve())));
    const env = {
      ...surfaceEnv({ discord }),
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_SIGNING_SECRET: 'secret',
      SLACK_MODE: 'http',
      SLACK_PORT: '0',
      SLACK_HOST: '127.0.0.1',
      SLACK_API_URL: `http://127.0.0.1:${(slackApi.address() as { port: number }).port}/api/`,
    };
    const key = gatewayLeaseKey(discord.botToken, prefix);
    const holder = new GatewayLease({ redis, key, logger: silentLogger() });
    expect(await holder.tryAcquire()).toBe(true);
    holder.keep(() => {});
    const { output } = startRunning({ ...env, REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix, PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    // Discord stands by (it starts first), Slack's start waits for its first call.
    await vi.waitFor(async () => expect(await redis.get(`${key}:standby`)).not.toBeNull(), { timeout: 30_000, interval: 100 });
    await vi.waitFor(() => expect(held.length).toBeGreaterThan(0), { timeout: 30_000, interval: 50 });
    discord.refuseGatewayIdentifies();
    await holder.release();
    await vi.waitFor(() => expect(output.stderr()).toBe(REFUSED_4004), { timeout: 30_000, interval: 50 });
    failing = true;
    for (const res of held.splice(0)) res.writeHead(500).end();
    const result = await output.ended;
    expect(result.stderr).toBe(REFUSED_4004);
    expect(result.code).toBe(2);
  }, 60_000);
});

describe.skipIf(redisSetup.skipReason)('npm start whose bot token Discord’s REST refuses while it holds the gateway (reset, its live session not closed)', () => {
  it('exits 2 naming DISCORD_TOKEN, never printing it, having given the gateway lease back for a replica with the new token', async () => {
    const url = requireRedisUrl(redisSetup);
    const prefix = uniquePrefix('start-rest-refused');
    const redis = await connectRedis(url);
    onTestFinished(async () => {
      await deleteKeys(url, prefix);
      await closeRedis(redis);
    });
    const discord = await fakeDiscord();
    emu.emulator.configure({ latencyMs: 1_000 });
    const env = { ...surfaceEnv({ discord }), PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_PARTIAL_IMAGES: '0', REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix };
    const key = gatewayLeaseKey(discord.botToken, prefix);
    const { output } = startRunning({ ...env, PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    await discord.waitFor(() => output.stdout().includes('Discord bot is online') || undefined, 'the Discord bot to be online', 30_000);
    expect(await redis.get(key)).not.toBeNull();
    // A job whose interaction token expires while it runs: its result goes to the channel with the bot token, reset meanwhile.
    const ix = discord.slashCommand('imagine', { prompt: 'a lighthouse, the token reset meanwhile', quality: 'low' });
    await discord.waitFor(() => emu.emulator.requests.some((r) => r.route === 'generations') || undefined, 'the job to reach the image service', 15_000);
    discord.expireToken(ix.token);
    discord.refuseBotToken();
    const result = await withTimeout(output.ended, 30_000, 'npm start went on with a bot token Discord refused');
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('pictor: Discord did not accept the bot token (401 Unauthorized); check DISCORD_TOKEN (copy it again, or Bot → Reset Token in the Developer Portal)\n');
    expect(result.stdout + result.stderr).not.toContain(discord.botToken);
    expect(discord.requests.filter((r) => r.status === 401 && r.rawPath.endsWith(`/channels/${discord.channelId}/messages`))).toHaveLength(1);
    expect(await redis.get(key)).toBeNull();
  }, 60_000);
});

const REFUSED_4004 = 'pictor: Discord did not accept the bot token (gateway close 4004 Authentication failed); check DISCORD_TOKEN (copy it again, or Bot → Reset Token in the Developer Portal)\n';

describe('npm start whose token Discord refuses while it runs (reset in the Developer Portal): exit 2, a job it runs seen through', () => {
  /**
   * `npm start` with both bots, a job of each running at the image service (each image takes `latencyMs`), then the
   * Discord token reset: Discord closes the live gateway session with 4004. The final replies and the process's end.
   */
  async function resetWhileAJobRuns(latencyMs: number, env: Record<string, string> = {}) {
    const discord = await fakeDiscord();
    const slack = await fakeSlack();
    emu.emulator.configure({ latencyMs });
    const settings = { ...surfaceEnv({ discord, slack }), PICTOR_BASE_URL: emu.url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_PARTIAL_IMAGES: '0', PICTOR_DATA_DIR: await testTempDir('pictor-start-'), ...env };
    const { output } = startRunning(settings);
    await discord.waitFor(() => output.stdout().includes('Discord bot is online') || undefined, 'the Discord bot to be online', 30_000);
    const eventsUrl = await slack.waitFor(() => slackEventsUrl(output.stdout()), 'the Slack bot to be online', 30_000);
    slack.deliverOverHttp(eventsUrl);
    const ix = discord.slashCommand('imagine', { prompt: 'a lighthouse, the token reset meanwhile', quality: 'low' });
    expect((await slack.command({ command: '/imagine', text: 'a harbour on Slack, the Discord token reset meanwhile --quality low', channel: 'C0RESET' })).status).toBe(200);
    await discord.waitFor(() => emu.emulator.requests.filter((r) => r.route === 'generations').length === 2 || undefined, 'both jobs to reach the image service', 15_000);
    discord.resetGatewayToken();
    const result = await output.ended;
    expect(result.stderr).toBe(REFUSED_4004);
    expect(result.stdout + result.stderr).not.toContain(discord.botToken);
    // Off the gateway for good: no IDENTIFY or RESUME tried with the refused token.
    expect(discord.gatewayStats.refusedIdentifies).toBe(0);
    expect(discord.gatewayStats.identifies).toBe(1);
    return { result, reply: discord.original(ix), slack };
  }

  it('exits 2 naming DISCORD_TOKEN once the running jobs ended and their images were shown, Slack’s too', async () => {
    const { result, reply, slack } = await resetWhileAJobRuns(3_000);
    expect(result.code).toBe(2);
    expect(reply?.attachments).toHaveLength(1);
    expect(buttonsOf(reply!).some((b) => b.label === 'Reroll')).toBe(true);
    // The Slack job that ran meanwhile: its image shared in its channel, with its Reroll, before the exit (its status
    // line's last edit may be left to the next start's sweep, as in any stop).
    expect(slack.uploads).toHaveLength(1);
    expect(slack.callsOf('files.completeUploadExternal').filter((c) => c.ok && c.args.channel_id === 'C0RESET')).toHaveLength(1);
    expect(slack.botMessages('C0RESET').filter((m) => hasButton(m, 'pictor_reroll'))).toHaveLength(1);
  }, 60_000);

  it('exits 2 too when the job outlasts PICTOR_SHUTDOWN_GRACE_SECONDS: the job is stopped, its reply offers Retry', async () => {
    const { result, reply } = await resetWhileAJobRuns(60_000, { PICTOR_SHUTDOWN_GRACE_SECONDS: '1' });
    expect(result.code).toBe(2);
    expect(reply?.attachments ?? []).toHaveLength(0);
    expect(buttonsOf(reply!).some((b) => b.label === 'Retry')).toBe(true);
  }, 60_000);
});

describe('npm start that could not reach a chat service: trying again may work (exit 1)', () => {
  it('exits 1, could not start, when Discord does not answer at all', async () => {
    const discord = await fakeDiscord();
    const env = surfaceEnv({ discord });
    await discord.close();
    const result = await start({ ...env, PICTOR_DATA_DIR: await testTempDir('pictor-start-') });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^pictor: could not start: could not log in to Discord: /);
    expect(result.stdout + result.stderr).not.toContain(env.DISCORD_TOKEN);
  }, 60_000);
});
