import type { BreakerSettings } from '../spend/breaker.js';
import type { SpendCaps } from '../spend/caps.js';
import type { ScopeRoleBudgets } from '../spend/role-budgets.js';
import type { QuotaStore, ScopeSettingEntry } from '../spend/types.js';

/**
 * What the console reads. The ledger (`store`) is enough for every figure, so
 * `pictor console` runs from it alone; what only the chat bots know comes in
 * through `bots`, which `npm start` provides (nothing in src/ imports the bots).
 */
export interface ConsoleSource {
  /** The ledger: usage records, reservations, refusal counts, the breaker, the chat admins' caps. */
  store: QuotaStore;
  /** The operator's settings, as read from the environment at the entry point. */
  operator: OperatorSettings;
  /** What the chat bots know; absent for `pictor console`. */
  bots?: BotsView | undefined;
}

/** The operator's money settings the console shows and measures against. */
export interface OperatorSettings {
  caps: SpendCaps;
  /** `PICTOR_DM_DAILY_USD`, `PICTOR_DM_MONTHLY_USD`: each person's budget outside servers. */
  dmCaps: { dailyUsd?: number | undefined; monthlyUsd?: number | undefined };
  breaker: BreakerSettings | undefined;
  /** `PICTOR_IMAGES_PER_MINUTE`: the account's limit, drawn against the images made per hour. */
  imagesPerMinute: number | undefined;
  /** Which ledger: the real account's, or the embedded emulator's (no money is spent there). */
  ledger: 'account' | 'emulator';
}

/** One setting in force, as the settings page lists it: never a secret's value. */
export interface SettingRow {
  name: string;
  value: string;
  /** Where it comes from: the variable, "default", or who changed it. */
  source: string;
}

/** A kept image of a job. */
export interface KeptImage {
  data: Buffer;
}

/**
 * The images the bots keep of their jobs (the Discord bot's, for its buttons), as the console shows them: the three
 * answers come together, so no thumbnail is served without asking whether its image is still kept.
 */
export interface KeptImages {
  /**
   * Which images each of these jobs (ledger job ids) still has kept: their indices in the job's own numbering (0-based,
   * ascending; one not kept is left out), its thumbnails. A job with none kept may be left out. Given `atMost`, the first
   * `atMost` of each job's (what a row shows): the others are not asked of the store.
   */
  indices(jobIds: readonly string[], atMost?: number): Promise<ReadonlyMap<string, readonly number[]>>;
  /** A job's kept image `index` (the job's numbering, as `indices` answers it). */
  read(jobId: string, index: number): Promise<KeptImage | undefined>;
  /** Whether a job's image `index` is still kept, without reading it (a thumbnail made of it is served only while it is). */
  has(jobId: string, index: number): Promise<boolean>;
}

/**
 * What only the chat bots know, provided by `npm start` (`bots/console-view.ts`).
 * Every member is optional and may answer less than asked: the console then
 * shows keys instead of names and no thumbnail.
 */
export interface BotsView {
  /** Names of servers/workspaces (scope keys) and users (user keys) the bots know. */
  names?(keys: readonly string[]): Promise<ReadonlyMap<string, string>>;
  /** The images the bots keep, for the jobs page's thumbnails. */
  images?: KeptImages | undefined;
  /** The bots' settings in force (queue, pace, previews, what every server may do …), each with where it comes from. */
  settings?(): SettingRow[];
  /**
   * The chat admins' settings (channels, who may generate …) of every server/workspace that has some kept, and of these
   * (whose record may be damaged whole), with who set each and when; one kept that cannot be read (a damaged value or
   * record) as what that means for the scope's jobs.
   */
  chatSettings?(scopeKeys: readonly string[]): Promise<Record<string, Record<string, ChatSettingRow>>>;
  /**
   * The budgets chat admins gave roles (Discord roles, Slack user groups), by scope key, of every server/workspace
   * that has some: `unreadable` where they are kept and cannot be read. The caps page and the alerts apply them with
   * the job runner's rule (`memberLimits`).
   */
  roleBudgets?(): Promise<Record<string, ScopeRoleBudgets>>;
  /** The bot token of a Slack workspace installed through OAuth (for alerts to a channel there). */
  slackToken?(teamId: string): Promise<string | undefined>;
}

/**
 * One chat admin's setting of a scope, as the console shows it: its value with who set it and when, or — stored and
 * unreadable — whether every job of the scope is refused until an admin sets it again (a restriction), its default
 * applies meanwhile, or (the role budgets) its members may spend nothing until an admin sets them again.
 */
export type ChatSettingRow = ScopeSettingEntry | { unreadable: 'jobs_refused' | 'default_applies' | 'spend_nothing' };
