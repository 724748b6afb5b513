import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/internal.js';
import { RecordingLogger } from '../discord/harness.js';
import { startSlackBot, type SlackBotSettings } from '../../../bots/slack/index.js';
import type { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import { finishedActions, finishedJob, jobMessages, png, startHarness, settledOnHeldClock, statusOf, type Harness, waitOnHeldClock } from './harness.js';

const ADMIN = 'U0ADMIN';
const STATE_SECRET = 'a-state-secret-for-the-oauth-tests';

let h: Harness | undefined;
afterEach(async () => {
  // Fake timers a test left on (it timed out before putting them back) go before anything else of this worker runs.
  vi.useRealTimers();
  await h?.close();
  h = undefined;
});

/** The bot with no bot token of its own: workspaces install it through OAuth. */
function startOAuth(options: { logger?: RecordingLogger } = {}): Promise<Harness> {
  return startHarness({
    bot: {
      botToken: undefined,
      oauth: { clientId: '1111.2222', clientSecret: 'fake-client-secret-0001', stateSecret: STATE_SECRET },
      adminUserIds: [ADMIN],
      ...options,
    },
  });
}

/**
 * What an admin's browser does: opens the install page, which redirects to
 * Slack's authorize page (with a state, and a cookie holding it); approves
 * there for `team`; follows Slack's redirect back with the code and state.
 */
async function install(harness: Harness, team: string, options: { cookie?: boolean } = {}): Promise<Response> {
  const start = await fetch(harness.bot.installUrl!, { redirect: 'manual' });
  expect(start.status).toBe(302);
  const cookie = start.headers.get('set-cookie')?.split(';')[0];
  expect(cookie).toMatch(/^slack-app-oauth-state=/);
  const redirectUri = new URL('/slack/oauth_redirect', harness.bot.installUrl).toString();
  const back = harness.fake.approveInstall(start.headers.get('location')!, { team, redirectUri });
  return fetch(back, { redirect: 'manual', headers: options.cookie === false ? {} : { cookie: cookie! } });
}

function installationFile(harness: Harness, team: string): string {
  return join(harness.dataDir, 'slack', 'installations', `team-${team}.json`);
}

/** Slack's events are acknowledged before they are handled: waits for the installation's file to go. */
async function removed(path: string): Promise<void> {
  await vi.waitFor(() => expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' }), { timeout: 5000, interval: 20 });
}

/** Runs `/imagine …` from a workspace and returns the private answer (in the acknowledgement, or through the response URL). */
async function privately(fake: FakeSlack, team: string, text: string, user = 'U0ALICE'): Promise<string> {
  const ack = await fake.command({ command: '/imagine', text, user, team, channel: `C0${team}` });
  expect(ack.status).toBe(200);
  const inAck = (ack.body as { text?: string } | undefined)?.text;
  if (inAck) return inAck;
  const response = await fake.waitFor(() => fake.responses.find((r) => ack.responseUrl.endsWith(r.id)), `the answer to /imagine ${text}`);
  return String(response.body.text);
}

describe('the Slack app in many workspaces (OAuth)', () => {
  it('installs through /slack/install, Slack’s authorize page and oauth.v2.access, and keeps the workspace’s bot token in the data folder, readable by its owner only', async () => {
    h = await startOAuth();

    const done = await install(h, 'T0ALPHA');

    expect(done.status).toBe(200);
    const exchange = h.fake.callsOf('oauth.v2.access');
    expect(exchange).toHaveLength(1);
    expect(exchange[0]).toMatchObject({ ok: true, args: { client_id: '1111.2222' } });
    // A record of the bots' state: `{ pictorState, holder, value }`.
    const saved = (JSON.parse(await readFile(installationFile(h, 'T0ALPHA'), 'utf8')) as { value: { team: { id: string }; bot: { token: string; userId: string } } }).value;
    expect(saved.team.id).toBe('T0ALPHA');
    expect(saved.bot).toMatchObject({ token: h.fake.workspaceOf('T0ALPHA')!.botToken, userId: 'U0BOTALPHA' });
    expect((await stat(installationFile(h, 'T0ALPHA'))).mode & 0o777).toBe(0o600);
  });

  it('stores nothing when the redirect comes back without the browser’s state cookie (a forged or replayed install)', async () => {
    h = await startOAuth();

    const done = await install(h, 'T0ALPHA', { cookie: false });

    expect(done.status).toBeGreaterThanOrEqual(400);
    expect(h.fake.callsOf('oauth.v2.access')).toEqual([]);
    await expect(readdir(join(h.dataDir, 'slack', 'installations'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('serves two workspaces from one process, each with its own bot token and its own budget', async () => {
    h = await startOAuth();
    const { fake } = h;
    expect((await install(h, 'T0ALPHA')).status).toBe(200);
    expect((await install(h, 'T0BETA')).status).toBe(200);

    // Alpha's admin closes Alpha's budget for today; Beta's is untouched.
    expect(await privately(fake, 'T0ALPHA', 'admin budget workspace-daily 0', ADMIN)).toContain('$0.00');
    expect(await privately(fake, 'T0ALPHA', 'a lighthouse --quality low')).toMatch(/budget/i);
    await fake.command({ command: '/imagine', text: 'a lighthouse --quality low', team: 'T0BETA', channel: 'C0BETA' });
    await finishedJob(fake, 'C0BETA');

    // One image was made, for Beta, and every call for Beta's job went out with Beta's token.
    expect(h.emulator.requests.filter((r) => r.path === '/v1/images/generations')).toHaveLength(1);
    // A call's team is set only when its token was accepted: the team it acts in.
    const betaCalls = fake.calls.filter((c) => c.args.channel === 'C0BETA' || c.args.channel_id === 'C0BETA');
    expect(betaCalls.length).toBeGreaterThan(2);
    expect(betaCalls.every((c) => c.team === 'T0BETA')).toBe(true);

    // Alpha's budget opens again; its job then runs with Alpha's token, in Alpha.
    await privately(fake, 'T0ALPHA', 'admin budget workspace-daily clear', ADMIN);
    await fake.command({ command: '/imagine', text: 'a harbour --quality low', team: 'T0ALPHA', channel: 'C0ALPHA' });
    await finishedJob(fake, 'C0ALPHA');
    const alphaCalls = fake.calls.filter((c) => c.args.channel === 'C0ALPHA' || c.args.channel_id === 'C0ALPHA');
    expect(alphaCalls.length).toBeGreaterThan(2);
    expect(alphaCalls.every((c) => c.team === 'T0ALPHA')).toBe(true);
    expect(fake.unauthorized).toEqual([]);
  });

  it('answers a mention of the workspace’s own bot user, downloading the message’s image with that workspace’s token', async () => {
    h = await startOAuth();
    const { fake } = h;
    await install(h, 'T0ALPHA');
    await install(h, 'T0BETA');
    const image = fake.addFile({ name: 'photo.png', bytes: await png(), team: 'T0BETA' });

    // Alpha's bot user named in Beta is not a mention of the bot there.
    await fake.userMessage({ team: 'T0BETA', channel: 'C0BETA', text: '<@U0BOTALPHA> a cat' });
    await fake.userMessage({ team: 'T0BETA', channel: 'C0BETA', text: '<@U0BOTBETA> make the sky purple --quality low', files: [image] });
    await finishedJob(fake, 'C0BETA');

    expect(jobMessages(fake, 'C0BETA')).toHaveLength(1);
    expect(h.emulator.requests.map((r) => r.path)).toEqual(['/v1/images/edits']);
    expect(fake.downloads.map((d) => ({ fileId: d.fileId, authorized: d.authorized }))).toEqual([{ fileId: image.id, authorized: true }]);
    const betaCalls = fake.calls.filter((c) => c.args.channel === 'C0BETA');
    expect(betaCalls.length).toBeGreaterThan(2);
    expect(betaCalls.every((c) => c.team === 'T0BETA')).toBe(true);
  });

  it('keeps an Enterprise Grid org-wide install once, for the organization, and answers its workspaces with its token', async () => {
    h = await startOAuth();
    const { fake } = h;
    const start = await fetch(h.bot.installUrl!, { redirect: 'manual' });
    const cookie = start.headers.get('set-cookie')!.split(';')[0]!;
    const back = fake.approveInstall(start.headers.get('location')!, { team: 'E0ORG', orgWide: true, redirectUri: new URL('/slack/oauth_redirect', h.bot.installUrl).toString() });
    expect((await fetch(back, { headers: { cookie } })).status).toBe(200);

    expect(await readdir(join(h.dataDir, 'slack', 'installations'))).toEqual(['enterprise-E0ORG.json']);
    await fake.command({ command: '/imagine', text: 'a lighthouse --quality low', team: 'T0GRIDONE', enterprise: 'E0ORG', channel: 'C0GRID' });
    await finishedJob(fake, 'C0GRID');
    const gridCalls = fake.calls.filter((c) => c.args.channel === 'C0GRID');
    expect(gridCalls.length).toBeGreaterThan(2);
    expect(gridCalls.every((c) => c.team === 'E0ORG')).toBe(true);
  });

  it('removes the installation when a workspace uninstalls the app, and then ignores that workspace’s requests while serving the others', async () => {
    h = await startOAuth();
    const { fake } = h;
    await install(h, 'T0ALPHA');
    await install(h, 'T0BETA');

    const deliveries = await fake.uninstall('T0ALPHA');

    expect(deliveries.map((d) => d.status)).toEqual([200, 200]);
    await removed(installationFile(h, 'T0ALPHA'));
    await stat(installationFile(h, 'T0BETA'));
    // Bolt finds no installation for Alpha: it acknowledges (so Slack does not retry) and calls no listener.
    const ignored = await fake.command({ command: '/imagine', text: 'a lighthouse --quality low', team: 'T0ALPHA', channel: 'C0ALPHA' });
    expect(ignored.status).toBe(200);
    expect(ignored.body).toBeUndefined();
    await fake.command({ command: '/imagine', text: 'a lighthouse --quality low', team: 'T0BETA', channel: 'C0BETA' });
    await finishedJob(fake, 'C0BETA');
    expect(fake.messagesIn('C0ALPHA')).toEqual([]);
    expect(fake.responses.filter((r) => ignored.responseUrl.endsWith(r.id))).toEqual([]);
    expect(h.emulator.requests.filter((r) => r.path === '/v1/images/generations')).toHaveLength(1);
    // No call was made with the revoked token.
    expect(fake.unauthorized).toEqual([]);
  });

  it('removes the installation when the bot token alone is revoked (tokens_revoked)', async () => {
    h = await startOAuth();
    await install(h, 'T0ALPHA');

    await h.fake.deliver('event', {
      token: 'legacy-verification-token',
      team_id: 'T0ALPHA',
      api_app_id: 'A0PICTOR',
      type: 'event_callback',
      event_id: 'Ev0REVOKED',
      event_time: Math.floor(Date.now() / 1000),
      event: { type: 'tokens_revoked', tokens: { oauth: ['U0SOMEONE'], bot: ['U0BOTALPHA'] }, event_ts: '1.000001' },
    });

    await removed(installationFile(h, 'T0ALPHA'));
  });

  it('keeps the installation when only a user token is revoked', async () => {
    h = await startOAuth();
    await install(h, 'T0ALPHA');

    const delivery = await h.fake.deliver('event', {
      token: 'legacy-verification-token',
      team_id: 'T0ALPHA',
      api_app_id: 'A0PICTOR',
      type: 'event_callback',
      event_id: 'Ev0USERREVOKED',
      event_time: Math.floor(Date.now() / 1000),
      event: { type: 'tokens_revoked', tokens: { oauth: ['U0SOMEONE'] }, event_ts: '1.000002' },
    });

    expect(delivery.status).toBe(200);
    await stat(installationFile(h, 'T0ALPHA'));
  });

  it('keeps the installations across a restart: a button of an earlier job works on the new process, with its workspace’s token', async () => {
    const before = await startOAuth();
    const { fake, dataDir } = before;
    await install(before, 'T0ALPHA');
    await fake.command({ command: '/imagine', text: 'a paper boat --quality low', team: 'T0ALPHA', channel: 'C0ALPHA' });
    await finishedJob(fake, 'C0ALPHA');
    const done = await finishedActions(fake, 'C0ALPHA');
    await before.close({ fake: true, dataDir: true });

    h = await startHarness({ fake, dataDir, bot: { botToken: undefined, oauth: { clientId: fake.clientId, clientSecret: fake.clientSecret, stateSecret: STATE_SECRET } } });
    await fake.clickButton(done, 'pictor_reroll', 'U0BOB', 'T0ALPHA');
    await finishedJob(fake, 'C0ALPHA', 1);

    expect(fake.callsOf('oauth.v2.access')).toHaveLength(1);
    const alphaCalls = fake.calls.filter((c) => c.args.channel === 'C0ALPHA');
    expect(alphaCalls.length).toBeGreaterThan(4);
    expect(alphaCalls.every((c) => c.team === 'T0ALPHA')).toBe(true);
  });

  it('sweeps a job a dead process left with the token of the job’s workspace, and makes no call for one of a workspace no longer installed', async () => {
    const before = await startOAuth();
    const { fake, dataDir } = before;
    await install(before, 'T0ALPHA');
    await fake.command({ command: '/imagine', text: 'a paper boat --quality low', team: 'T0ALPHA', channel: 'C0ALPHA' });
    const message = await finishedJob(fake, 'C0ALPHA');
    await before.close({ fake: true, dataDir: true });
    // What a killed process leaves: requests still active, one in Alpha, one in a workspace that has since uninstalled.
    const folder = join(dataDir, 'slack', 'requests');
    const lost = { version: 1, id: 'LOSTLOSTLOSTLOS1', kind: 'generate', prompt: 'a lost boat', options: {}, teamId: 'T0ALPHA', userId: 'U0ALICE', channelId: 'C0ALPHA', messageTs: message.ts, createdAt: Date.now(), status: 'active' };
    const gone = { ...lost, id: 'LOSTLOSTLOSTLOS2', teamId: 'T0GONE', channelId: 'C0GONE' };
    for (const record of [lost, gone]) await writeFile(join(folder, `${record.id}.json`), JSON.stringify(record));
    const updatesBefore = fake.callsOf('chat.update').length;

    h = await startHarness({ fake, dataDir, bot: { botToken: undefined, oauth: { clientId: fake.clientId, clientSecret: fake.clientSecret, stateSecret: STATE_SECRET } } });

    await fake.waitFor(() => statusOf(jobMessages(fake, 'C0ALPHA')[0]!).includes('restarted'), 'the lost job to be marked stopped');
    // Every update since (a write Slack refused as too soon is tried again) is of Alpha's message, with Alpha's token.
    const sweeps = fake.callsOf('chat.update').slice(updatesBefore);
    expect(sweeps.filter((c) => c.ok)).toHaveLength(1);
    expect(sweeps.every((c) => c.team === 'T0ALPHA' && c.args.channel === 'C0ALPHA' && c.args.ts === message.ts)).toBe(true);
    expect(fake.unauthorized).toEqual([]);
  });

  it('still drops a replayed request (signature and replay guard as with one token)', async () => {
    const logger = new RecordingLogger();
    h = await startOAuth({ logger });
    await install(h, 'T0ALPHA');
    await h.fake.command({ command: '/imagine', text: 'a cat --quality low', team: 'T0ALPHA', channel: 'C0ALPHA' });
    await finishedJob(h.fake, 'C0ALPHA');

    expect((await h.fake.replayLastDelivery()).status).toBe(200);
    await vi.waitFor(() => expect(logger.entries.map((e) => e.msg)).toContain('refused a replayed Slack request'), { timeout: 15_000 });
    const forged = await h.fake.command({ command: '/imagine', text: 'a dog', team: 'T0ALPHA', channel: 'C0ALPHA' }, { secret: 'not-the-signing-secret' });

    // Refused before Bolt reads it: nothing of it runs.
    expect(forged.status).toBe(401);
    expect(jobMessages(h.fake, 'C0ALPHA')).toHaveLength(1);
  });

  it('counts the waits before an acknowledgement from when the request reached the bot, not from when Bolt had read its installation: a stalled read leaves no time to check the request, which is refused and logged, and no form opens', async () => {
    let release: () => void = () => {};
    try {
      const logger = new RecordingLogger();
      h = await startOAuth({ logger });
      await install(h, 'T0ALPHA');
      // The clock is the test's from before the command: the bot's every reading of it is the test's to move.
      vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
      // Bolt reads the workspace's installation (its authorize) before any middleware runs: that read is held.
      const installations = h.state.store.space(h.state.spaces.slackInstallations);
      const held = new Promise<void>((resolve) => (release = resolve));
      const read = installations.get.bind(installations);
      const reads = vi.spyOn(installations, 'get').mockImplementation(async (key) => {
        await held;
        return read(key);
      });
      const delivered = h.fake.command({ command: '/imagine-edit', text: '', team: 'T0ALPHA', channel: 'C0ALPHA', user: ADMIN });
      await waitOnHeldClock(h.fake, () => reads.mock.calls.length > 0 || undefined, 'Bolt to read the installation');
      // Past the 2 s all of Pictor's waits before an acknowledgement share (`ACK_WAITS_MS`), within Bolt's own 3 s.
      vi.advanceTimersByTime(2_700);
      release();
      await settledOnHeldClock(h.fake, delivered, 'the command’s acknowledgement');
      await waitOnHeldClock(h.fake, () => logger.entries.find((e) => e.msg === 'could not check a Slack request against the ones seen lately: refused it'), 'the refusal logged');

      // The replay check had no time left: refused as a request it cannot check is (it may be a replay), nothing said.
      await vi.advanceTimersByTimeAsync(100);
      expect(h.fake.callsOf('views.open')).toHaveLength(0);
      expect(h.fake.responses).toEqual([]);
    } finally {
      release();
      vi.restoreAllMocks();
      vi.useRealTimers();
    }
  });

  it('never logs a workspace’s bot token, the client secret or the state secret', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(line) } });
    h = await startHarness({
      bot: { botToken: undefined, oauth: { clientId: '1111.2222', clientSecret: 'fake-client-secret-0001', stateSecret: STATE_SECRET }, logger },
    });
    await install(h, 'T0ALPHA');
    await h.fake.command({ command: '/imagine', text: 'a cat --quality low', team: 'T0ALPHA', channel: 'C0ALPHA' });
    await finishedJob(h.fake, 'C0ALPHA');
    const token = h.fake.workspaceOf('T0ALPHA')!.botToken;
    await h.fake.uninstall('T0ALPHA');
    await removed(installationFile(h, 'T0ALPHA'));

    const log = lines.join('');
    expect(log).toContain('the Slack app was installed');
    expect(log).toContain('T0ALPHA');
    for (const secret of [token, 'fake-client-secret-0001', STATE_SECRET]) expect(log).not.toContain(secret);
  });

});

/**
 * OAuth over Socket Mode, and a bot token together with OAuth, are refused by the options' type (`SlackConnection`):
 * `npm run typecheck` fails if either compiles. From the environment, `readSlackConfig` refuses them (config.test.ts).
 */
export function refusedByTheirType(common: Omit<SlackBotSettings, never>): void {
  const oauth = { clientId: '1', clientSecret: 'secret-secret', stateSecret: STATE_SECRET };
  // @ts-expect-error OAuth installs need HTTP mode.
  void startSlackBot({ ...common, oauth, mode: 'socket', appToken: 'xapp-1' });
  // @ts-expect-error A bot token or OAuth, not both.
  void startSlackBot({ ...common, oauth, botToken: 'xoxb-1', mode: 'http', signingSecret: 's' });
  // @ts-expect-error Socket Mode needs an app-level token.
  void startSlackBot({ ...common, botToken: 'xoxb-1', mode: 'socket' });
}
