import { createHash } from 'node:crypto';
import { INTERACTION_MAX_AHEAD_MS, INTERACTION_TOKEN_MS } from './interaction-token.js';
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
 * Every record the bots keep, by kind: the one list, each space bounded (docs/shared-limits.md describes each and adds
 * them up). Names and folders are those older versions wrote, where a kind existed.
 */
export function botSpaces(settings: SpaceSettings = {}) {
  const historyMs = (settings.historyRetentionDays ?? 30) * DAY;
  // A Discord job's life; the audit's ended jobs are kept as long (nothing older is left to repeat).
  const discordJobMs = 7 * DAY;
  return {
    /** Discord jobs: the spec, the reply while it runs, the names of its kept images. */
    discordJobs: { name: 'discord-jobs', dir: 'discord/jobs', ttlMs: discordJobMs, maxValueBytes: 64 * KIB, maxCount: 20_000, maxBytes: 64 * MIB },
    /** Copies of the images of Discord jobs, for their buttons; past the bound the oldest go (their buttons say "too old"). */
    discordImages: {
      name: 'discord-images',
      dir: 'discord/kept-images',
      ttlMs: DAY,
      maxValueBytes: MAX_KEPT_IMAGE_BYTES,
      maxCount: 2_000,
      maxBytes: settings.keptImagesBytes ?? DEFAULT_KEPT_IMAGES_MB * MIB,
      binary: true,
    },
    /** Which Discord job kept the images of a runner job: the console's thumbnails. */
    discordJobOutputs: { name: 'discord-job-outputs', dir: 'discord/job-outputs', ttlMs: DAY, maxValueBytes: 256, maxCount: 20_000, maxBytes: 2 * MIB },
    /** Each member's open drafts of the "Edit image" menu (keys only). */
    discordDrafts: { name: 'discord-drafts', dir: 'discord/drafts', ttlMs: HOUR, maxValueBytes: 4 * KIB, maxCount: 10_000, maxBytes: 8 * MIB },
    /** Interaction ids taken (over HTTP) while one can be: its token's life plus the clock allowance. */
    discordInteractions: { name: 'discord-interactions', dir: 'discord/interactions', ttlMs: INTERACTION_TOKEN_MS + INTERACTION_MAX_AHEAD_MS, maxValueBytes: 64, maxCount: 100_000 },
    /**
     * Slack requests: what a Reroll or Edit button needs (the files stay Slack's). An open Workflow Builder `step` (its
     * execution id and token) is kept through a forget, until its listener or the sweep after a crash ends it.
     */
    slackRequests: { name: 'slack-requests', dir: 'slack/requests', ttlMs: 90 * DAY, maxValueBytes: 64 * KIB, maxCount: 50_000, maxBytes: 64 * MIB, keptThroughForget: ['step'] },
    /** Slack request signatures seen (HTTP mode), until Bolt would refuse the request anyway. */
    slackSeen: { name: 'slack-seen', dir: 'slack/seen', ttlMs: 7 * MINUTE, maxValueBytes: 64, maxCount: 100_000 },
    /**
     * Slack messages (and workflow steps' `function_executed`) taken, so each event's deliveries, retries (signed
     * again, past `slack-seen`) and redeliveries start one job; 15 minutes outlive the last retry twice.
     */
    slackMessages: { name: 'slack-messages', dir: 'slack/messages', ttlMs: 15 * MINUTE, maxValueBytes: 64, maxCount: 20_000 },
    /** Who opened the Slack Home tab lately, by workspace (no prompt): a change publishes their Home again anywhere. */
    slackHomeViewers: { name: 'slack-home-viewers', dir: 'slack/home-viewers', ttlMs: DAY, maxValueBytes: 64 * KIB, maxCount: 10_000, maxBytes: 8 * MIB },
    /** Slack installations (OAuth): each workspace's bot token; kept until the app is uninstalled. */
    slackInstallations: { name: 'slack-installations', dir: 'slack/installations', ttlMs: undefined, maxValueBytes: 16 * KIB },
    /** Each member's last jobs (at most 20, newest first) for the history commands. */
    history: { name: 'history', dir: 'history/members', ttlMs: historyMs, maxValueBytes: 1 * MIB, maxCount: 10_000, maxBytes: 64 * MIB },
    /** Each server's/workspace's members with jobs in its history (at most 100, latest first). */
    historyScopes: { name: 'history-scopes', dir: 'history/scopes', ttlMs: historyMs, maxValueBytes: 16 * KIB, maxCount: 10_000, maxBytes: 16 * MIB },
    /** What chat admins chose for their server/workspace (channels, blocked words, defaults …); their caps are the ledger's. */
    scopeSettings: { name: 'scope-settings', dir: 'settings', ttlMs: undefined, maxValueBytes: 256 * KIB },
    /** Each server's/workspace's house styles (at most 25); anyone may add the bot, so past the bounds the oldest go. */
    houseStyles: { name: 'house-styles', dir: 'styles', ttlMs: undefined, maxValueBytes: 64 * KIB, maxCount: 10_000, maxBytes: 64 * MIB },
    /** Each member's own defaults (size, quality, format, count, private, previews), until they change them or `forget`. */
    memberDefaults: { name: 'member-defaults', dir: 'members/defaults', ttlMs: undefined, maxValueBytes: 1 * KIB, maxCount: 100_000, maxBytes: 32 * MIB },
    /** The audit channels' posts with their prompts, so `forget` can write them again without (30 days: how far it reaches). */
    // A post of 20 entries whose prompts of 1,000 characters are all escaped in JSON (6 bytes a character) is ~140 KB.
    auditPosts: { name: 'audit-posts', dir: 'audit/posts', ttlMs: 30 * DAY, maxValueBytes: 256 * KIB, maxCount: 20_000, maxBytes: 64 * MIB },
    /**
     * The job ends posted to an audit channel, so an end recorded again (a sweep after a crash) is not posted twice; 7
     * days, as long as a Discord job lives (a Slack repeat past it, after a week down, posts twice, never loses one).
     */
    auditEnded: { name: 'audit-ended', dir: 'audit/ended', ttlMs: discordJobMs, maxValueBytes: 64, maxCount: 50_000 },
    /**
     * When each member last asked `forget`: a job of theirs running then, anywhere, records its end with no prompt
     * (`JobHistory.forgotten`). A mark only has to outlive such a job (docs/shared-limits.md, the `forgotten` row).
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

/**
 * Whether a scope's settings record is damaged: kept but unreadable, or not an object of settings. Its restrictions and
 * role budgets then stay locked until an admin sets or clears each again (fail closed): the one test of it, for the
 * chat settings (`bots/runner/scope-settings.ts`) and the upgrade's take of what 0.1 kept (`upgrade.ts`).
 */
export function isDamagedSettings(record: unknown): record is symbol | null | string | number | boolean | bigint | readonly unknown[] {
  return record !== undefined && (typeof record !== 'object' || record === null || Array.isArray(record));
}
