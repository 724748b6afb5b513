import { createHash } from 'node:crypto';
import { INTERACTION_MAX_AHEAD_MS, INTERACTION_TOKEN_MS } from '../interaction-token.js';
import { STATE_KEY_PATTERN, type SpaceDefinition } from './StateStore.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const KIB = 1024;
const MIB = 1024 * KIB;

/** The largest image kept for the buttons of a Discord job (Reroll, Retry, Edit); a larger one is not kept. */
export const MAX_KEPT_IMAGE_BYTES = 8 * MIB;
/** Default `PICTOR_KEPT_IMAGES_MB`: the bytes of kept images, past which the oldest go first. */
export const DEFAULT_KEPT_IMAGES_MB = 256;

export interface SpaceSettings {
  /** `PICTOR_KEPT_IMAGES_MB` in bytes. */
  keptImagesBytes?: number | undefined;
  /** `PICTOR_HISTORY_RETENTION_DAYS`. Default 30. */
  historyRetentionDays?: number | undefined;
}

/**
 * Every record the bots keep, by kind: the one list. Each space is bounded by
 * Pictor (TTL, value size, count, bytes; oldest first), so the total a backend
 * holds is known in advance (docs/shared-limits.md adds it up). Names and
 * folders are those older versions wrote, where a kind existed.
 */
export function botSpaces(settings: SpaceSettings = {}) {
  const historyMs = (settings.historyRetentionDays ?? 30) * DAY;
  /** How long a Discord job's record lives: the audit's ended jobs are kept as long (nothing older is left to repeat). */
  const discordJobMs = 7 * DAY;
  return {
    /** Discord jobs: the spec, the reply while it runs, the names of its kept images. */
    discordJobs: { name: 'discord-jobs', dir: 'discord/jobs', ttlMs: discordJobMs, maxValueBytes: 64 * KIB, maxCount: 20_000, maxBytes: 64 * MIB },
    /**
     * Copies of the images of Discord jobs (their bytes as they are: a process holds an image once while it keeps it),
     * for their buttons; past the bound the oldest go (their buttons say "too old").
     */
    discordImages: {
      name: 'discord-images',
      dir: 'discord/kept-images',
      ttlMs: DAY,
      maxValueBytes: MAX_KEPT_IMAGE_BYTES,
      maxCount: 2_000,
      maxBytes: settings.keptImagesBytes ?? DEFAULT_KEPT_IMAGES_MB * MIB,
      binary: true,
    },
    /** Which Discord job kept the images of a ledger job (its runner job id): the console's thumbnails, for as long as the images are kept. */
    discordJobOutputs: { name: 'discord-job-outputs', dir: 'discord/job-outputs', ttlMs: DAY, maxValueBytes: 256, maxCount: 20_000, maxBytes: 2 * MIB },
    /** Each member's open drafts of the "Edit image" menu (keys only). */
    discordDrafts: { name: 'discord-drafts', dir: 'discord/drafts', ttlMs: HOUR, maxValueBytes: 4 * KIB, maxCount: 10_000, maxBytes: 8 * MIB },
    /** Interaction ids taken (over HTTP), across restarts and replicas, while one can be taken: its token's life, and the minute a clock may lag Discord's. */
    discordInteractions: { name: 'discord-interactions', dir: 'discord/interactions', ttlMs: INTERACTION_TOKEN_MS + INTERACTION_MAX_AHEAD_MS, maxValueBytes: 64, maxCount: 100_000 },
    /**
     * Slack requests: what a Reroll or Edit button needs (the files stay Slack's). An open Workflow Builder `step` (its
     * execution id and token) is kept through a forget, until its listener or the sweep after a crash ends it.
     */
    slackRequests: { name: 'slack-requests', dir: 'slack/requests', ttlMs: 90 * DAY, maxValueBytes: 64 * KIB, maxCount: 50_000, maxBytes: 64 * MIB, keptThroughForget: ['step'] },
    /** Slack request signatures seen (HTTP mode), until Bolt would refuse the request anyway (5 minutes plus the clock skew). */
    slackSeen: { name: 'slack-seen', dir: 'slack/seen', ttlMs: 7 * MINUTE, maxValueBytes: 64, maxCount: 100_000 },
    /**
     * Slack messages taken (a mention, a direct message), by workspace, channel and ts: `app_mention` and `message` of
     * one message, Slack's retries of either (each signed again, so `slack-seen` passes them: at once, after 1 minute,
     * after 5) and Socket Mode's redeliveries, to any replica or after a restart, start one job. 15 minutes outlive the
     * last retry (about 6 minutes after the first delivery) more than twice. A workflow step's `function_executed`
     * (by workspace and `function_execution_id`) is taken here too, for the same retries and redeliveries.
     */
    slackMessages: { name: 'slack-messages', dir: 'slack/messages', ttlMs: 15 * MINUTE, maxValueBytes: 64, maxCount: 20_000 },
    /**
     * Who opened the Slack Home tab lately, by workspace (each member's last open, DM channel and language; no prompt): a
     * change publishes their Home again on any replica and after a restart. The 500 of a workspace seen last, for 24 hours.
     */
    slackHomeViewers: { name: 'slack-home-viewers', dir: 'slack/home-viewers', ttlMs: DAY, maxValueBytes: 64 * KIB, maxCount: 10_000, maxBytes: 8 * MIB },
    /** Slack installations (OAuth): each workspace's bot token; kept until the app is uninstalled. */
    slackInstallations: { name: 'slack-installations', dir: 'slack/installations', ttlMs: undefined, maxValueBytes: 16 * KIB },
    /** Each member's last jobs (at most 20, newest first) for the history commands. */
    history: { name: 'history', dir: 'history/members', ttlMs: historyMs, maxValueBytes: 1 * MIB, maxCount: 10_000, maxBytes: 64 * MIB },
    /** Each server's/workspace's members with jobs in its history (at most 100, latest first). */
    historyScopes: { name: 'history-scopes', dir: 'history/scopes', ttlMs: historyMs, maxValueBytes: 16 * KIB, maxCount: 10_000, maxBytes: 16 * MIB },
    /** What chat admins chose for their server/workspace (channels, blocked words, defaults …); their caps are the ledger's. */
    scopeSettings: { name: 'scope-settings', dir: 'settings', ttlMs: undefined, maxValueBytes: 256 * KIB },
    /**
     * Each server's/workspace's house styles (at most 25, by name): text around a member's prompt and default options.
     * Anyone who adds the bot to a server of their own may define some: past 10 000 servers/workspaces or 64 MiB, the
     * styles changed longest ago go first (their members are told the style is unknown).
     */
    houseStyles: { name: 'house-styles', dir: 'styles', ttlMs: undefined, maxValueBytes: 64 * KIB, maxCount: 10_000, maxBytes: 64 * MIB },
    /** Each member's own defaults (size, quality, format, count, private, previews), until they change them or `forget`. */
    memberDefaults: { name: 'member-defaults', dir: 'members/defaults', ttlMs: undefined, maxValueBytes: 1 * KIB, maxCount: 100_000, maxBytes: 32 * MIB },
    /**
     * The audit channels' posts (where each is, and its entries with their prompts), so a member's `forget` can write
     * them again without their prompts: 30 days, which is how far back `forget` reaches the audit channels.
     */
    // A post of 20 entries whose prompts of 1,000 characters are all escaped in JSON (6 bytes a character) is ~140 KB.
    auditPosts: { name: 'audit-posts', dir: 'audit/posts', ttlMs: 30 * DAY, maxValueBytes: 256 * KIB, maxCount: 20_000, maxBytes: 64 * MIB },
    /**
     * The job ends posted to an audit channel (a digest of the platform, the server or workspace and the job's key), kept
     * once the post succeeded: a job's end recorded again (a sweep after a crash between the post and the surface's
     * mark) is not posted twice. Such a repeat comes from the next start's sweep: 7 days, as long as a Discord job's
     * record lives (past it nothing is left to repeat); a Slack request lives longer, but its repeat past 7 days needs a
     * crash in that moment and a bot down a week, and then posts the end twice, never loses it. A record on both
     * backends (bounded by its count on Redis too): ~440–550 bytes a job there, key, index and sizes entries included.
     */
    auditEnded: { name: 'audit-ended', dir: 'audit/ended', ttlMs: discordJobMs, maxValueBytes: 64, maxCount: 50_000 },
    /**
     * When each member last asked `forget` (ms since the epoch): a job of theirs that was running then still holds its
     * prompt in its process, maybe another replica's, and records its end with none (`JobHistory.forgotten`). A mark
     * only has to outlive such a job (its wait in the queue, then at most 1 + `PICTOR_MAX_RETRIES` requests of
     * `PICTOR_TIMEOUT_SECONDS` each, then its end shown and recorded): how far a day outlives it at the defaults is said
     * once, in docs/shared-limits.md (the `forgotten` row), and tested. A job running longer after its member's forget
     * (a timeout raised to hours, or a queue that long) records its end with its prompt. A sweep needs no mark: `forget` erased the prompt of a stopped job's stored record or
     * request. Bounded by its count alone (values of a few bytes), which `stateBytesBound` counts; past it the oldest
     * marks go first — a running job's mark only once more distinct members forgot during its run than the count.
     */
    forgotten: { name: 'forgotten', dir: 'members/forgotten', ttlMs: DAY, maxValueBytes: 64, maxCount: 20_000 },
  } satisfies Record<string, SpaceDefinition>;
}

export type BotSpaces = ReturnType<typeof botSpaces>;

/** A member key (`discord:123`, `slack:U0A`) or scope key as a state key (`discord-123`; its digest if it has other characters). */
export function stateKeyOf(key: string): string {
  const readable = key.replace(':', '-');
  return STATE_KEY_PATTERN.test(readable) ? readable : digestKeyOf(key);
}

/** A longer text (a request signature) as a state key: its SHA-256, base64url. */
export function digestKeyOf(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}
