import type { REST } from 'discord.js';
import type { LoggerLike } from '../../src/index.js';
import type { ChatBudgets, InputRoomHold, JobHandle, JobHistory, JobInfo, JobSpec, Requester, ScopePolicy, UpdateSink } from '../runner/index.js';
import type { DownloadPolicy } from './download-images.js';
import type { DiscordJobStore } from './job-store.js';

/** What this surface uses of the job runner (`JobRunner` from bots/runner fits). */
export interface DiscordJobRunner {
  submit(spec: JobSpec, sink: UpdateSink): Promise<JobHandle>;
  cancel(jobId: string, by: Requester): boolean;
  get(jobId: string): JobInfo | undefined;
  /** A refusal when the requester's (or server's) budget for today is already spent; checked before anything is downloaded. */
  budgetRefusal?(requester: Requester): Promise<Error | undefined>;
  /** A refusal by the server's rules (who, where, what); checked before the interaction is answered, so it stays private. */
  policyRefusal?(spec: JobSpec): Promise<Error | undefined>;
  /** Room in the queue for an edit's images while they are fetched (`queue_full` refusal when there is none); see fetch-within-queue.ts. */
  holdInputRoom?(requester: Requester, bytes: number): Error | InputRoomHold;
  /** The usage summaries and the server's budgets (`/imagine-usage`, `/imagine-admin budget`). */
  readonly budgets: Pick<ChatBudgets, 'summary' | 'setCap'>;
  /** The server's rules and settings (`/imagine-admin settings`, `/imagine-admin set`). */
  readonly policy: ScopePolicy;
  /** Members' last jobs (`/imagine-history`); undefined when none are kept. */
  readonly history?: JobHistory | undefined;
}

/** Everything the command, button and modal handlers share. */
export interface BotContext {
  runner: DiscordJobRunner;
  store: DiscordJobStore;
  /** Asks the replica running the job of the record `key` to cancel it for `by` (true when it got the request); false without Redis. */
  askHolderToCancel(key: string, by: Requester): Promise<boolean>;
  logger: LoggerLike;
  /** REST client for interaction webhooks (see rest-request.ts); the Discord client's own REST carries the bot token. */
  webhookRest: REST;
  adminRoleIds: readonly string[];
  /** `DISCORD_USER_INSTALLS`: jobs are taken in DMs and user installs (on the user's own budget); otherwise refused there. */
  userInstalls: boolean;
  downloadPolicy: DownloadPolicy;
  /** Keeps track of a job until its reply is final (stop() waits for these). */
  track(done: Promise<unknown>): void;
}
