import { PermissionFlagsBits } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { startService } from '../../bots/main.js';
import { say } from '../../bots/runner/index.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import type { FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { snowflake } from '../fakes/discord/snowflake.js';
import { makeImage } from '../helpers/images.js';
import { discordAnswer, discordResult, slackEventsUrl, startChatFakes, startUpstream, surfaceEnv, tempDataDir, useCleanup } from '../helpers/service-fakes.js';
import { deleteKeys, requireRedisUrl, testRedis, uniquePrefix } from '../helpers/shared-limits-redis.js';
import { everythingKept } from '../helpers/everything-kept.js';
import { finishedJob } from './slack/harness.js';

const defer = useCleanup();
const redis = testRedis();
const MARKER = 'QUIXOTIC';
const CONSOLE_TOKEN = 'forget-test-console-token-0123456789';
const SLACK_ADMIN = 'U0ADMIN';
const MANAGE_SERVER = String(PermissionFlagsBits.ManageGuild);

describe.each([
  { backend: 'file' as const, skip: undefined },
  { backend: 'redis' as const, skip: redis.skipReason },
])('forget, with npm start on $backend', ({ backend, skip }) => {
  it.skipIf(skip)('erases the member’s prompts from every file of the data folder and every Redis key (records, history, usage, backups), and the amounts stay', async () => {
    const { discord, slack } = await startChatFakes(defer);
    const upstream = await startUpstream(defer, 20);
    const dataDir = await tempDataDir(defer, 'pictor-forget-');
    const prefix = uniquePrefix('forget');
    const url = backend === 'redis' ? requireRedisUrl(redis) : undefined;
    if (url) defer(() => deleteKeys(url, prefix));
    const lines: string[] = [];
    const service = await startService(
      {
        PICTOR_LOG_LEVEL: 'silent',
        PICTOR_DATA_DIR: dataDir,
        PICTOR_BASE_URL: upstream.url,
        PICTOR_API_KEY: DEV_API_KEY,
        PICTOR_PARTIAL_IMAGES: '0',
        PICTOR_UPDATE_INTERVAL_MS: '20',
        // Prompts in usage records too: forget must reach them.
        PICTOR_USAGE_PROMPTS: '1',
        // The owner's console, which shows those prompts and thumbnails of the images the Discord bot keeps.
        PICTOR_CONSOLE_PORT: '0',
        PICTOR_CONSOLE_TOKEN: CONSOLE_TOKEN,
        ...surfaceEnv({ discord, slack }),
        DISCORD_ALLOWED_ATTACHMENT_HOSTS: discord.cdnHost,
        SLACK_ADMIN_USER_IDS: SLACK_ADMIN,
        ...(url && { REDIS_URL: url, PICTOR_REDIS_PREFIX: prefix }),
      },
      (line) => lines.push(line),
    );
    defer(() => service.stop());
    slack.deliverOverHttp(slackEventsUrl(lines.join('\n'))!);
    // Both audit channels record the jobs, prompts included: forget must reach their posts too.
    const audit = { discord: snowflake(), slack: 'C0AUDIT' };
    expect((await discordAnswer(discord, discord.slashCommand('imagine-admin audit', { channel: { channel: { id: audit.discord } } }, { user: discord.newUser('mod'), permissions: MANAGE_SERVER }))).content).toMatch(/^✅/);
    const chose = await slack.command({ command: '/imagine', text: `admin audit <#${audit.slack}|audit>`, channel: 'C0ADMIN', user: SLACK_ADMIN });
    await slack.waitFor(() => slack.responses.find((r) => chose.responseUrl.endsWith(r.id)), 'the audit channel to be chosen');

    // On Discord: a generation, an edit (its input kept for Reroll), and a job of another member.
    await discordResult(discord, discord.slashCommand('imagine', { prompt: `a ${MARKER} lighthouse`, quality: 'low' }));
    const png = await makeImage('png', 16, 16);
    await discordResult(discord, discord.slashCommand('edit', { prompt: `make it ${MARKER} blue`, quality: 'low', image1: discord.hostFile({ filename: 'a.png', bytes: png }) }));
    const other = discord.newUser('other');
    await discordResult(discord, discord.slashCommand('imagine', { prompt: 'a lighthouse of someone else', quality: 'low' }, { user: other }));
    // On Slack: a job of a member of a workspace.
    await slack.command({ command: '/imagine', text: `a ${MARKER} fox --quality low`, channel: 'C0FORGET', user: 'U0FORGET' });
    await finishedJob(slack, 'C0FORGET');
    // Posted a couple of seconds after the jobs ended.
    const auditTexts = () => [
      ...discord.channelMessages(audit.discord).flatMap((m) => m.embeds.map((e) => String(e.description))),
      ...slack.botMessages(audit.slack).map((m) => JSON.stringify(m.blocks ?? [])),
    ];
    await discord.waitFor(() => auditTexts().filter((t) => t.includes(MARKER)).length === 3 || undefined, 'the audit posts of the member’s three jobs');
    // The member's own defaults (no prompt, but theirs: forget erases them too).
    expect((await discordAnswer(discord, discord.slashCommand('imagine-settings', { size: '1536x1024', private: false }))).content).toContain('• size: 1536x1024');
    const defaultsRecord = new RegExp(`(member-defaults:r:|members/defaults/)discord-${discord.user.id}`);
    expect(await everythingKept(dataDir, url, prefix)).toMatch(defaultsRecord);
    expect(await everythingKept(dataDir, url, prefix)).toContain(MARKER);
    const spentBefore = await usage(discord);
    // The console lists the member's generation with its prompt and a thumbnail of its kept image (the bots' state).
    const owner = await consoleOf(service.console!.url!);
    const generation = (await owner.jobRows()).find((row) => row.html.includes(`a ${MARKER} lighthouse`))!;
    expect(generation.thumbs).toEqual([`/thumbs/${generation.jobId}/0`]);
    const thumbnail = await owner.get(generation.thumbs[0]!);
    expect([thumbnail.status, thumbnail.headers.get('content-type')]).toEqual([200, 'image/webp']);

    const erased = await discordAnswer(discord, discord.slashCommand('imagine-history', { show: 'forget' }));
    expect(erased.content).toContain('Erased your history (2 jobs)');
    const ack = await slack.command({ command: '/imagine', text: 'forget', channel: 'C0FORGET', user: 'U0FORGET' });
    const said = await slack.waitFor(() => slack.responses.find((r) => ack.responseUrl.endsWith(r.id)), 'the answer to /imagine forget');
    expect(String(said.body.text)).toContain('Erased your history (1 job)');
    // Their audit entries were written again without the prompts; the other member's stays.
    expect(auditTexts().join('\n')).not.toContain(MARKER);
    expect(auditTexts().filter((t) => t.includes(say('en', 'audit.erased')))).toHaveLength(3);
    expect(auditTexts().some((t) => t.includes('a lighthouse of someone else'))).toBe(true);

    // Not a trace of the prompts anywhere Pictor keeps them; the other member's job and every amount stay.
    const kept = await everythingKept(dataDir, url, prefix);
    expect(kept).not.toContain(MARKER);
    expect(kept).toContain('a lighthouse of someone else');
    expect(await usage(discord)).toBe(spentBefore);
    expect((await discordAnswer(discord, discord.slashCommand('imagine-history', {}))).content).toContain('Nothing yet.');
    expect(kept).not.toMatch(defaultsRecord);
    expect((await discordAnswer(discord, discord.slashCommand('imagine-settings', {}))).content).toContain('You have set none');
    // Nor in the console: its list reads the records again (the prompts leave its memory), and the thumbnail of the
    // erased job's image is no longer served (not even the one it had made); the job itself stays listed, and paid.
    const rows = await owner.jobRows();
    expect(rows.map((row) => row.html).join('\n')).not.toContain(MARKER);
    expect(rows.find((row) => row.jobId === generation.jobId)?.thumbs).toEqual([]);
    expect((await owner.get(generation.thumbs[0]!)).status).toBe(404);
  }, 60_000);
});

/** The owner logged in to the console: its pages and thumbnails, and the recent jobs' rows. */
async function consoleOf(url: string) {
  const login = await fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams({ token: CONSOLE_TOKEN }), redirect: 'manual', headers: { origin: url } });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const get = (path: string) => fetch(`${url}${path}`, { headers: { cookie } });
  return {
    get,
    async jobRows(): Promise<{ jobId: string; html: string; thumbs: string[] }[]> {
      const page = await (await get('/jobs')).text();
      const recent = page.slice(page.indexOf('id="recent-jobs"'));
      return [...recent.matchAll(/<tr data-job="([^"]+)">(.*?)<\/tr>/g)].map(([, jobId, html]) => ({ jobId: jobId!, html: html!, thumbs: [...html!.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!) }));
    },
  };
}

/** What `/imagine-usage` says the member spent today. */
async function usage(discord: FakeDiscord): Promise<string> {
  return /Your spend\*\* \(UTC\): (\$[\d.]+) today/.exec((await discordAnswer(discord, discord.slashCommand('imagine-usage', {}))).content)?.[1] ?? 'none';
}
