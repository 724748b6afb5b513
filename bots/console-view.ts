import { formatUsd, type LoggerLike } from 'pictor';
import { SlotSemaphore, envText, type Env, type BotsView, type ScopeRoleBudgets, type ScopeSettingEntries, type ChatSettingRow, type KeptImage, type SettingRow } from 'pictor/internal';
import type { JobRunner } from './runner/index.js';
import { roleBudgetsOf } from './runner/chat-budgets.js';
import type { RunnerConfig } from './runner/config.js';
import { isFailClosed, settingsInState, storedScopeKeys } from './runner/scope-settings.js';
import type { BotState } from './state/index.js';

/** The images the Discord bot keeps for its buttons, by the runner job that made them (its job records' store: `main.ts` hands it over). */
export interface KeptJobImages {
  keptOutputs(runnerJobId: string, atMost?: number): Promise<number[] | undefined>;
  hasKeptOutput(runnerJobId: string, index: number): Promise<boolean>;
  readKeptOutput(runnerJobId: string, index: number): Promise<{ data: Buffer } | undefined>;
}

export interface BotsConsoleViewOptions {
  runner: JobRunner;
  runnerConfig: RunnerConfig;
  /** The bots' state: the chat settings admins chose are read from it. */
  state: BotState;
  /** The Discord bot's kept images (the console's thumbnails). */
  keptImages: KeptJobImages;
  env: Env;
  logger: LoggerLike;
  /** Discord's REST base (without `/v10`) and the bot token, to look up server and member names; undefined without Discord. */
  discord?: { apiBaseUrl: string; token: string } | undefined;
  /** Slack's Web API and the bot token of a single-workspace app, to learn the workspace's name. */
  slack?: { apiUrl: string; token: string } | undefined;
  /** Each Slack workspace's bot token, for an app installed through OAuth. */
  slackTokenOf?: ((teamId: string) => Promise<string | undefined>) | undefined;
}

const NAME_TTL_MS = 6 * 60 * 60_000;
/** Names asked of a platform in one call at most (the rest show as keys until a later page asks again). */
const LOOKUPS_PER_CALL = 20;
const LOOKUP_TIMEOUT_MS = 3_000;

/** How many servers' and workspaces' settings the console's role budgets read asks for at once. */
export const ROLE_BUDGET_READS_AT_ONCE = 16;

/**
 * What the console learns from the chat bots of `npm start` (see
 * `BotsView` in src/console): names of servers, workspaces and members
 * (from the jobs running here, and looked up on Discord and Slack, kept six
 * hours), the images the Discord bot keeps for its buttons (thumbnails),
 * the bots' settings and where each comes from, and the settings chat admins
 * chose (of every server/workspace that has some kept). Every answer is best
 * effort: what it cannot tell, the console shows as a key.
 */
export function botsConsoleView(options: BotsConsoleViewOptions): BotsView {
  const { runner, runnerConfig, env } = options;
  const kept = options.keptImages;
  const names = new Map<string, { name: string | undefined; until: number }>();
  // The console reads the stored settings itself, never through the jobs' cache (a page scanning every scope would
  // evict the busy ones the jobs read); no logger: the jobs' own store warns of what cannot be read.
  const scopeSettingsSpace = options.state.store.space<ScopeSettingEntries>(options.state.spaces.scopeSettings);
  const scopeSettings = settingsInState(scopeSettingsSpace);

  async function lookUp(key: string): Promise<string | undefined> {
    const [platform, id, more] = key.split(':');
    if (!id) return undefined;
    try {
      if (platform === 'discord' && options.discord && more === undefined && /^\d{17,20}$/.test(id)) {
        // A key is a server's or a member's: the server is asked first (the bot is in it), then the user.
        for (const path of [`/v10/guilds/${id}`, `/v10/users/${id}`]) {
          const res = await fetch(`${options.discord.apiBaseUrl}${path}`, { headers: { authorization: `Bot ${options.discord.token}` }, signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS) });
          if (!res.ok) {
            await res.body?.cancel();
            continue;
          }
          const body = (await res.json()) as { name?: string; global_name?: string | null; username?: string };
          const name = body.name ?? body.global_name ?? body.username;
          if (name) return name;
        }
      }
      if (platform === 'slack' && options.slack && /^T[A-Z0-9]+$/.test(id)) {
        const res = await fetch(`${options.slack.apiUrl}auth.test`, { method: 'POST', headers: { authorization: `Bearer ${options.slack.token}` }, signal: AbortSignal.timeout(LOOKUP_TIMEOUT_MS) });
        const body = (await res.json().catch(() => ({}))) as { ok?: boolean; team?: string; team_id?: string };
        if (body.ok && body.team_id === id) return body.team;
      }
    } catch (error) {
      options.logger.debug({ key, err: error instanceof Error ? error.message : String(error) }, 'could not look up a name for the console');
    }
    return undefined;
  }

  return {
    async names(keys) {
      const now = Date.now();
      const found = new Map<string, string>();
      // Who runs a job here right now has the name the chat gave.
      for (const job of runner.activeJobs()) {
        const { platform, userId, userName } = job.requester;
        if (userName) names.set(`${platform}:${userId}`, { name: userName, until: now + NAME_TTL_MS });
      }
      let lookups = 0;
      for (const key of keys) {
        let known = names.get(key);
        if ((!known || known.until <= now) && lookups < LOOKUPS_PER_CALL && (key.startsWith('discord:') || key.startsWith('slack:'))) {
          lookups++;
          known = { name: await lookUp(key), until: now + NAME_TTL_MS };
          names.set(key, known);
          if (names.size > 10_000) names.delete(names.keys().next().value!);
        }
        if (known?.name) found.set(key, known.name);
      }
      return found;
    },

    images: {
      // Numbered as the job's images, as its Edit buttons are: one not kept, or dropped since by the images' bound, is
      // left out, never a shift of those after it (so a thumbnail the console made of it is no longer served). The page's
      // jobs are asked together, not one after another: with Redis each is its link, its record, then its images' EXISTS
      // side by side (`keptOutputs`), which the client sends without waiting for each answer — one round trip for a job's
      // images. Given `atMost` (a row's thumbnails), only as many images as a row shows are asked, not every image of the job.
      async indices(jobIds, atMost) {
        const outputs = await Promise.all(jobIds.map((jobId) => kept.keptOutputs(jobId, atMost).catch(() => undefined)));
        const indices = new Map<string, readonly number[]>();
        for (const [i, jobId] of jobIds.entries()) if (outputs[i]) indices.set(jobId, outputs[i]);
        return indices;
      },

      async read(jobId, index): Promise<KeptImage | undefined> {
        const image = await kept.readKeptOutput(jobId, index);
        return image && { data: image.data };
      },

      // A thumbnail already made: its one image asked (one `has`), not its job's every image.
      has: (jobId, index) => kept.hasKeptOutput(jobId, index),
    },

    settings: () => botSettings(runnerConfig, env),

    async chatSettings(scopeKeys) {
      const all: Record<string, Record<string, ChatSettingRow>> = {};
      // Every scope with settings kept, whether or not it spent this month (one whose rules cannot be read, its record
      // damaged whole too, has refused every job since), and those asked for.
      const stored = await storedScopeKeys(scopeSettingsSpace);
      for (const scopeKey of new Set([...stored, ...scopeKeys])) {
        const [platform, ...rest] = scopeKey.split(':');
        if (platform !== 'discord' && platform !== 'slack') continue;
        const kept = await scopeSettings.get(scopeKey);
        const effective = runner.policy.effectiveFrom({ platform, scopeId: rest.join(':') }, kept);
        const entries: Record<string, ChatSettingRow> = {};
        for (const [name, setting] of Object.entries(effective)) {
          const s = setting as { value?: unknown; source?: string; change?: { by: string; at: number } };
          if (s?.source === 'admin' && s.change) entries[name] = { value: s.value, by: s.change.by, at: s.change.at };
        }
        // One kept but unreadable is shown as what it means, so the owner sees why a scope refuses its jobs.
        for (const name of effective.unreadable) entries[name] = { unreadable: isFailClosed(name) ? 'jobs_refused' : 'default_applies' };
        // Role budgets that cannot be read give no member anything to spend: the rules leave them out, the owner sees them.
        if (roleBudgetsOf(kept) === 'unreadable') entries.roleBudgets = { unreadable: 'spend_nothing' };
        if (Object.keys(entries).length > 0) all[scopeKey] = entries;
      }
      return all;
    },

    // Every scope with settings kept, read as the jobs read them (`roleBudgetsOf`): the caps page and the alerts give
    // its members their roles' budgets (`memberLimits`). One whose budgets cannot be read is `unreadable`: its members
    // may spend nothing, and the page says so.
    // Read ROLE_BUDGET_READS_AT_ONCE scopes at a time: an alert check waits for them all (hundreds of servers, one
    // round trip each).
    async roleBudgets() {
      const scopeKeys = await storedScopeKeys(scopeSettingsSpace);
      const slots = new SlotSemaphore(ROLE_BUDGET_READS_AT_ONCE);
      const read = await Promise.all(
        scopeKeys.map(async (scopeKey) => {
          const free = await slots.take();
          try {
            return roleBudgetsOf(await scopeSettings.get(scopeKey));
          } finally {
            free();
          }
        }),
      );
      const all: Record<string, ScopeRoleBudgets> = {};
      scopeKeys.forEach((scopeKey, i) => {
        const budgets = read[i]!;
        if (budgets === 'unreadable' || budgets.length > 0) all[scopeKey] = budgets;
      });
      return all;
    },

    slackToken: options.slackTokenOf,
  };
}

/** The bots' settings in force, each with the variable it comes from (or "default"). */
function botSettings(config: RunnerConfig, env: Env): SettingRow[] {
  const from = (variable: string) => (envText(env, variable) === undefined ? 'default' : variable);
  const list = (items: readonly string[] | undefined, all: string) => (items === undefined || items.length === 0 ? all : items.join(', '));
  const { limits, controls } = config;
  return [
    { name: 'Jobs one user may have at once', value: String(limits.userConcurrentJobs ?? 'no limit'), source: from('PICTOR_USER_CONCURRENT_JOBS') },
    { name: 'Seconds between two jobs of one user', value: String(limits.userCooldownSeconds ?? 0), source: from('PICTOR_USER_COOLDOWN_SECONDS') },
    { name: 'Jobs waiting to be sent, at most', value: String(config.maxQueuedJobs), source: from('PICTOR_MAX_QUEUED_JOBS') },
    { name: 'Input images of waiting edits, at most', value: `${Math.round(config.maxQueuedInputBytes / (1024 * 1024))} MB`, source: from('PICTOR_MAX_QUEUED_INPUT_MB') },
    { name: 'Partial images per image', value: String(config.partialImages), source: from('PICTOR_PARTIAL_IMAGES') },
    { name: 'Light previews', value: config.lightPreviews ? 'on' : 'off', source: from('PICTOR_LIGHT_PREVIEWS') },
    { name: 'Servers and workspaces where the bots work', value: list(controls.allowedScopes, 'everywhere'), source: from('PICTOR_ALLOWED_SCOPES') },
    { name: 'Words blocked everywhere', value: controls.blockedWords?.length ? `${controls.blockedWords.length} words or phrases` : 'none', source: from('PICTOR_BLOCKED_WORDS') },
    { name: 'Images per job, at most', value: String(controls.maxImagesPerJob ?? 10), source: from('PICTOR_MAX_IMAGES_PER_JOB') },
    { name: 'Qualities allowed', value: list(controls.qualities, 'all'), source: from('PICTOR_ALLOWED_QUALITIES') },
    { name: 'Sizes allowed', value: list(controls.sizes, 'all'), source: from('PICTOR_ALLOWED_SIZES') },
    { name: 'Moderation low allowed', value: controls.allowLowModeration ? 'yes' : 'no', source: from('PICTOR_ALLOW_LOW_MODERATION') },
    { name: 'Days a member’s history is kept', value: String(config.historyRetentionDays), source: from('PICTOR_HISTORY_RETENTION_DAYS') },
    { name: 'Each DM user’s budget', value: `${config.dmCaps.dailyUsd === undefined ? 'no daily cap' : `${formatUsd(config.dmCaps.dailyUsd)} a day`}, ${config.dmCaps.monthlyUsd === undefined ? 'no monthly cap' : `${formatUsd(config.dmCaps.monthlyUsd)} a month`}`, source: 'PICTOR_DM_DAILY_USD, PICTOR_DM_MONTHLY_USD' },
  ];
}
