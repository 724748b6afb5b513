import type { REST } from 'discord.js';
import type { LoggerLike } from 'pictor';
import type { JobRunner, QuotaStore, Requester } from '../runner/index.js';
import type { DownloadPolicy } from './download-images.js';
import type { FirstAnswersInFlight } from './first-answers-first.js';
import type { JobRecordStore } from './JobRecordStore.js';

/**
 * What this surface uses of the job runner (`JobRunner` from bots/runner fits): its intake — `request` for a job,
 * `requestForm` before a form opens — which every entry point calls once, before its first answer; `cancel` and
 * `get` for the buttons; the budgets, rules and history for the usage, admin and history commands.
 */
export type DiscordJobRunner = Pick<JobRunner, 'request' | 'requestForm' | 'cancel' | 'get' | 'budgets' | 'policy' | 'history' | 'styles' | 'members' | 'audit' | 'recordEnded'>;

/** Everything the command, button and modal handlers share. */
export interface BotContext {
  runner: DiscordJobRunner;
  store: JobRecordStore;
  /** Asks the replica running the job of the record `key` to cancel it for `by` (true when it got the request); false without Redis. */
  askHolderToCancel(key: string, by: Requester): Promise<boolean>;
  logger: LoggerLike;
  /** REST client for interaction webhooks (see rest-request.ts). */
  webhookRest: REST;
  /** REST client with the bot token, for the bot's whole life (a gateway login's client is not: see gateway-connection.ts). */
  botRest: REST;
  /** The first answers in flight: a job starts after those asked before its own (see first-answers-first.ts). */
  firstAnswers: FirstAnswersInFlight;
  adminRoleIds: readonly string[];
  /** `DISCORD_USER_INSTALLS`: jobs are taken in DMs and user installs (on the user's own budget); otherwise refused there. */
  userInstalls: boolean;
  downloadPolicy: DownloadPolicy;
  /**
   * The ledger's usage records (what it charged each job, by the runner's job id): the sweep says what a job a stop cut
   * off was charged (the start's reconcile charges one that reached the service). Without it, nothing is said of it.
   */
  ledger?: Pick<QuotaStore, 'usage' | 'reconcile' | 'activeJobs'> | undefined;
  /** Keeps track of a job until its reply is final (stop() waits for these). */
  track(done: Promise<unknown>): void;
  /**
   * Aborted once the bot's stop waits no longer for the replies being shown (they settled, or its grace ran out): a
   * reply's wait before trying a message again ends there, and it is not tried again.
   */
  repliesGivenUp?: AbortSignal | undefined;
  /** The waits between a reply's tries of a final message (`ReplyTarget`'s `retryDelaysMs`); its default without. */
  replyRetryDelaysMs?: readonly number[] | undefined;
}
