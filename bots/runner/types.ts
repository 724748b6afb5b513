import { z } from 'zod';
import type { Words } from './words.js';
import type { FailureCode } from './describe-failure.js';
import { type Background, type OutputFormat, type PriceQuote, type Quality, type Size, type Usage } from 'pictor';
import { DM_SCOPE_PREFIX, type SpendRefusalCode } from 'pictor/internal';

/**
 * The contract between the platform-neutral job runner and the chat surfaces
 * (Discord, Slack). Surfaces turn platform input into a JobSpec, submit it, and
 * render the ordered JobUpdates; they never talk to the image client directly.
 */

export type Platform = 'discord' | 'slack';

/**
 * A person's own scope: Discord DMs and user installs (`dm:<user id>`). Its
 * jobs count against the operator's DM caps (`PICTOR_DM_*_USD`) instead of a
 * server's, and no chat admin's settings or caps apply to it.
 */
export function dmScopeId(userId: string): string {
  return `${DM_SCOPE_PREFIX}${userId}`;
}

/** Whether a scope id is a person's own scope (`dmScopeId`). */
export function isDmScope(scopeId: string): boolean {
  return scopeId.startsWith(DM_SCOPE_PREFIX);
}

/** The operator's caps of each person's own scope (`PICTOR_DM_DAILY_USD`, `PICTOR_DM_MONTHLY_USD`), in USD; undefined: no cap. */
export interface DmCaps {
  dailyUsd?: number | undefined;
  monthlyUsd?: number | undefined;
}

/** Who asked, and where. `scopeId` is the Discord server (guild) or Slack workspace (team), or the person's own (`dmScopeId`). */
export interface Requester {
  platform: Platform;
  userId: string;
  userName?: string | undefined;
  channelId: string;
  /**
   * Discord: the channel a thread or forum post (`channelId`) is in; undefined elsewhere. A server's `channels` rule
   * lets a member work in a thread of a channel it allows.
   */
  parentChannelId?: string | undefined;
  scopeId: string;
  /** Holds the platform's admin role (may cancel others' jobs, is not exempt from budgets). */
  isAdmin?: boolean | undefined;
  /**
   * Discord: the member's roles, which a server's rules may name (who may generate, who may use `high`) and role budgets
   * count; undefined when the interaction did not carry them (their roles are then unknown, not none).
   */
  roleIds?: readonly string[] | undefined;
  /**
   * The member's language as their platform says it (Discord's `interaction.locale`, Slack's user locale: `de`,
   * `ja-JP` …): what the runner says to them is in it (`localeOf`; English when unset or not spoken).
   */
  locale?: string | undefined;
}

/** An input image, already downloaded by the surface (attachment URLs expire). */
export interface InputImage {
  data: Buffer;
  filename?: string | undefined;
}

/** The request fields a chat user can set; everything else takes the spec's defaults. */
export interface JobOptions {
  n?: number | undefined;
  size?: Size | undefined;
  quality?: Quality | undefined;
  background?: Background | undefined;
  output_format?: OutputFormat | undefined;
  output_compression?: number | undefined;
  moderation?: 'low' | 'auto' | undefined;
}

export interface JobSpec {
  kind: 'generate' | 'edit';
  prompt: string;
  options: JobOptions;
  /** Required for edits (1 to 16). */
  images?: InputImage[] | undefined;
  requester: Requester;
  /**
   * Shown only to its requester (Discord: ephemeral; Slack: their DM with the bot). Asked for with the command's
   * option, or the member's default (`MemberDefaults`): undefined is the member's default, then public. The
   * server's/workspace's `private-results` setting may forbid it (`private_not_allowed`).
   */
  private?: boolean | undefined;
  /** Set by the intake when `private` came from the member's default (a refusal then names the default). */
  privateByDefault?: boolean | undefined;
}

/**
 * An edit's images fetched once the job is admitted (a download, or a read of
 * kept images): the queue holds room for `declaredBytes` meanwhile, then for
 * their real bytes.
 */
export interface ImagesToFetch {
  /** Their bytes as the platform or the store reported them (an unknown size counts as 0). */
  declaredBytes: number;
  /**
   * Fetches them, after the first public answer. A throw ends the job before it is sent (nothing charged) and reaches
   * `IntakeAnswers.fail`, logged by the runner: an `AbortedError` (the job cancelled meanwhile) as a cancel, anything
   * else as the failure it is.
   */
  fetch(): Promise<InputImage[]>;
}

/** What a surface calls a request's fields in a refusal (`output_format` → `format`, `--format`); the spec's names by default. */
export type FieldNames = Readonly<Partial<Record<string, string>>>;

/** One person's request of a job, as a surface read it (a command, a button, a modal, a mention): what `JobRunner.request` decides on. */
export interface JobIntent extends Omit<JobSpec, 'images'> {
  /** An edit's images: here already, or to fetch once the job is admitted. */
  images?: readonly InputImage[] | ImagesToFetch | undefined;
  fieldNames?: FieldNames | undefined;
  /** A house style of the server/workspace the member picked (`runner.styles`): applied first, so every rule sees the prompt and options as sent. */
  style?: string | undefined;
  /**
   * Which of the member's own defaults apply where they chose nothing. true (the default): all of them. `'previews'`:
   * only whether they watch previews — their own Reroll or Retry, whose options are the job as it was sent (the
   * defaults it took are in them already; no note of those it could not take is given again), `private` only when
   * asked. false: none (a Workflow Builder step, whose empty inputs are the workspace's defaults): what neither they
   * nor the style chose is the server's/workspace's default, previews as it shows them, `private` only when asked.
   * The server's/workspace's rules apply in every case.
   */
  memberDefaults?: boolean | 'previews' | undefined;
  /**
   * Run again by a job's button (Reroll, Retry), whoever's job it is: a refusal's advice names no option the button
   * lacks (a private job: ask again with the command, without private; the presser's private default: turn it off,
   * then press again). Undefined: asked with a command, a form (`inForm`) or a step.
   */
  again?: boolean | undefined;
  /**
   * Asked with a form (an edit form submitted): a refusal's advice names no option the form lacks — its private rule
   * says what `JobRunner.requestForm` says before the form opens, for private results turned off while it was open.
   */
  inForm?: boolean | undefined;
  /**
   * When the surface must give its first answer by (ms, as `Date.now()`; a chat platform's deadline, less the answer's
   * own trip): every read of the intake before it waits only until then, and a job not decided by then — or whose
   * reservation came after it — is refused (`answers.refuse`, with nothing reserved) in time for that answer. Undefined: no limit.
   */
  answerBy?: number | undefined;
}

/** What the intake tells a surface of a job it admitted (its budget reserved, its room held). */
export interface AdmittedJob {
  id: string;
  /** The upper-bound price reserved. */
  estimate: PriceQuote;
  /** The prompt as sent (a house style's text applied): what the job's message shows and a Reroll sends again. */
  prompt: string;
  /** Shown only to its requester (asked, or the member's default): the first answer and everything after it are private. */
  private: boolean;
  /** The options it runs with: a house style's options and the member's defaults filled in where they chose nothing (what a Reroll asks again). */
  options: JobOptions;
  /** The member's defaults the server's/workspace's rules do not allow, which were not used: to tell the member privately. */
  ignoredDefaults?: Words | undefined;
}

/**
 * Who can open a job's message: `everyone` in its channel, or only the `member` who asked (a direct message with the
 * app). `recordEnded` decides by it where the link to it is kept: the member's own history always; the audit channel
 * and the admins' view of the history only for `everyone`.
 */
export type MessageSeenBy = 'everyone' | 'member';

/** Where an admitted job's updates go, once the surface has given its public answer. */
export interface AcceptedJob {
  sink: UpdateSink;
  /** The surface's key of the job (what its buttons carry): the job is kept in the member's history under it when it ends. Without it, it is not kept. */
  historyKey?: string | undefined;
  /** A link to the job's message, for its history entry; asked once the job has ended. */
  historyLink?: (() => Promise<string | undefined>) | undefined;
  /**
   * Who can open the job's message (`MessageSeenBy`): `member` for one only the member sees (Slack: a direct message
   * with the app), whose link only the member's own history keeps. Default: `everyone` (a surface gives no link to a
   * message nobody else can open and no link opens, as Discord's ephemeral reply of a private job).
   */
  historyLinkSeenBy?: MessageSeenBy | undefined;
  /**
   * Called once the runner recorded the job's end (`recordEnded` resolved: its history and audit entries written, after
   * the link they wait for), never before and not when it rejected (a history entry that could not be written): where the surface saves that a sweep need not
   * record the job again (a crash before it leaves the job for the sweep to record again, which changes nothing).
   */
  onEndRecorded?: (() => Promise<void>) | undefined;
  /**
   * The surface's last step before the runner has the job, awaited as it starts it (an edit's images fetched and
   * checked), so before anything of it can reach the service: one that throws stops the job as a failed start does
   * (logged and counted once, here; `fail` tells the member), nothing sent or charged.
   */
  beforeStart?: (() => Promise<void>) | undefined;
}

/**
 * How a surface answers the person as the intake decides (`JobRunner.request`); each is called at most once. What
 * `refuse` and `fail` are handed, the runner has logged: the surface only tells the member.
 */
export interface IntakeAnswers {
  /**
   * Refused before anything was reserved, fetched or sent: the first answer, and private. `reason` is a
   * JobRefusedError, or what stopped the intake (the ledger unreachable, the bot shutting down); `describeFailure` words either.
   */
  refuse(reason: unknown): Promise<void>;
  /**
   * Admitted: gives the first, public answer and says where the job's updates go. Undefined when no answer could be
   * given (the interaction expired): the job is dropped, its reservation and room given back, nothing charged.
   */
  accept(job: AdmittedJob): Promise<AcceptedJob | undefined>;
  /**
   * After the public answer, the job could not start: its images could not be fetched, are not valid, or are larger
   * than declared past the queue's room (a JobRefusedError, or the surface's own error from `fetch`: an
   * `InputRefusedError` for an image it refuses, an `AbortedError` for a job cancelled while they came). Nothing sent or charged.
   */
  fail(reason: unknown): Promise<void>;
}

/** How a surface answers an entry point that opens a form before the job (`JobRunner.requestForm`). */
export interface FormAnswers {
  /** Refused (private): the form is not opened. The runner has logged it: the surface only tells the member. */
  refuse(reason: unknown): Promise<void>;
  /** Opens the form. */
  accept(): Promise<void>;
}

export type JobUpdate =
  | {
      type: 'queued';
      jobId: string;
      ahead: number;
      /** Why the wait is long, when the runner knows (e.g. the shared queue is unreachable). Shown to the user, in their language (`sayWords`). */
      notice?: Words | undefined;
    }
  | { type: 'started'; jobId: string }
  | {
      type: 'partial';
      jobId: string;
      /** Which output image (0-based) this partial belongs to, and its partial index. */
      imageIndex: number;
      partialIndex: number;
      /** The partial as the service sent it. */
      image: Buffer;
      format: OutputFormat;
      /**
       * What a surface uploads to show this partial: re-encoded at display
       * size by the runner (`PICTOR_LIGHT_PREVIEWS`), or the partial as it came
       * when that is off or fails. Made on the first call (a partial superseded
       * before it is shown is never encoded); never rejects.
       */
      preview(): Promise<PreviewImage>;
    }
  | {
      type: 'completed';
      jobId: string;
      images: Buffer[];
      /** Each image's real format, told by its bytes, in the order of `images` (an answer may mix them): read through `formatsOf`. */
      formats: OutputFormat[];
      size: string;
      quality: string;
      background: string;
      usage: Usage | undefined;
      /** What the finished job cost by the core's pricing (a table price, or an estimate with its reason). */
      cost: PriceQuote;
      /** From submission to completion, by the runner's clock. */
      elapsedMs: number;
    }
  | {
      type: 'failed';
      jobId: string;
      /** Stable: the core's, a refusal's or a project error's code (`describeFailure`), a closed union to switch on. */
      code: FailureCode;
      /** One sentence a person can act on, in the requester's language. Never a stack trace or a secret. */
      message: string;
      /** The same sentence not yet said: a surface that shows the job in another language says it so (`sayWords`). */
      words: Words;
      /** Worth a Retry button. */
      retryable: boolean;
      /** The images that arrived before it failed: made, charged, and shown to the user. */
      images?: Buffer[] | undefined;
      /** Each image's real format, in the order of `images`: read through `formatsOf`. */
      formats?: OutputFormat[] | undefined;
      /** What the ledger charges it, when it does (`chargeOf`): none when its reservation is released (nothing that bills was sent). */
      cost?: JobCost | undefined;
    }
  | {
      type: 'cancelled';
      jobId: string;
      byUserId: string;
      /** `requested`: a person cancelled it (`byUserId`); `shutdown`: the bot is stopping (`byUserId` is empty). */
      reason?: 'requested' | 'shutdown' | undefined;
      /** The images finished before it was stopped: charged, and shown to the user. */
      images?: Buffer[] | undefined;
      /** Each image's real format, in the order of `images`: read through `formatsOf`. */
      formats?: OutputFormat[] | undefined;
      /** What the ledger charges it, when it does (`chargeOf`; pushed once the request stopped, not waiting for the ledger's settle): none when released. */
      cost?: JobCost | undefined;
    };

/**
 * What the ledger charges a failed or cancelled job (USD): what the runner's final update says and every surface's
 * charge line shows. The schema is what a store keeps of it (the history's and the records' job ends), and the type's source.
 */
export const JobCostSchema = z.object({ totalUsd: z.number() });
export type JobCost = z.output<typeof JobCostSchema>;

/**
 * Each of a job's images' own format, in the order of its images (an answer may mix them): what each file is named and
 * typed for. The one reader of `formats`; a record kept before it names one `format` for all (the first image's), and
 * an image neither names is taken as PNG (the service's default).
 */
export function formatsOf(from: { formats?: readonly OutputFormat[] | undefined; format?: OutputFormat | undefined }, count: number): OutputFormat[] {
  return Array.from({ length: count }, (_, i) => from.formats?.[i] ?? from.format ?? from.formats?.[0] ?? 'png');
}

/** A partial image ready to upload: its bytes and the format they are in (name and content type follow it). */
export interface PreviewImage {
  data: Buffer;
  format: OutputFormat;
  /** Re-encoded at display size; false when it is the partial as the service sent it. */
  light: boolean;
}

export type FinalUpdate = Extract<JobUpdate, { type: 'completed' | 'failed' | 'cancelled' }>;

/** Receives a job's updates, in order, one at a time (the runner awaits each). */
export type UpdateSink = (update: JobUpdate) => void | Promise<void>;

export interface JobHandle {
  id: string;
  /** When the runner accepted it (its clock, `JobInfo.submittedAt`): what its history entry is measured by against a member's forget. */
  submittedAt: number;
  /** Settles with the last update once the sink has received it. */
  done: Promise<FinalUpdate>;
}

/**
 * The scope rules' refusals (scope-policy.ts): who and where, then what. A rule of the server/workspace or of the
 * operator refused the job before anything was reserved or sent. `dms_not_enabled`: a DM or a user install while the
 * operator has not turned them on (`DISCORD_USER_INSTALLS`). `settings_unreadable`: a rule of the server/workspace is
 * stored and cannot be read (a damaged record), so none of its jobs runs until an admin sets or clears it again.
 */
export const POLICY_REFUSAL_CODES = [
  'scope_not_allowed',
  'member_blocked',
  'channel_not_allowed',
  'member_not_allowed',
  'blocked_word',
  'too_many_images',
  'quality_not_allowed',
  'high_quality_not_allowed',
  'size_not_allowed',
  'moderation_not_allowed',
  'dms_not_enabled',
  'private_not_allowed',
  'settings_unreadable',
] as const;

export type PolicyRefusalCode = (typeof POLICY_REFUSAL_CODES)[number];

/**
 * The runner's own refusal codes; the spend guard's (`budget_*` and a user's pace, `USER_PACE_CODES` in src/spend) are the others. `restarting`: the
 * bot is draining for a restart (deploy); `queue_full`: as many jobs wait to be sent as the runner queues
 * (`PICTOR_MAX_QUEUED_JOBS`), or an edit's images would take the input images held past `PICTOR_MAX_QUEUED_INPUT_MB`;
 * `input_too_large`: an edit's images alone pass that bound (it never fits: fewer or smaller images). Nothing queued,
 * nothing spent, for each of them. `style_unknown`: the member picked a house style the server/workspace does not have.
 * `defaults_unreadable`: one of the member's own defaults is stored and cannot be read (a damaged record), so none of
 * their jobs runs until they set it again or clear it (never taken for unset: a private default would be lost).
 * `outside_servers`: a command that manages or shows a server (Discord's `/imagine-admin`, a server's history) asked
 * outside the servers the bot is in (a DM, a group DM, a server where only the member added the app); the surface
 * refuses it before asking the runner anything.
 */
export const RUNNER_REFUSAL_CODES = ['validation_error', 'restarting', ...POLICY_REFUSAL_CODES, 'queue_full', 'input_too_large', 'style_unknown', 'defaults_unreadable', 'outside_servers'] as const;

/** Why a job was refused before anything was queued or spent. */
export type RefusalCode = SpendRefusalCode | (typeof RUNNER_REFUSAL_CODES)[number];

/** The core's spend guard contract: the runner reserves, marks sent, settles and releases through it. */
export type { QuotaStore, SpendLimits } from 'pictor/internal';

/** Where a job is. `queued` waits for the image service throttle; `running` is sent upstream. */
export type JobStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** What the runner tells about a job (for buttons and admin views). */
export interface JobInfo {
  id: string;
  kind: JobSpec['kind'];
  status: JobStatus;
  requester: Requester;
  /** Milliseconds, from the runner's clock. */
  submittedAt: number;
  startedAt?: number | undefined;
  finishedAt?: number | undefined;
  /** The upper-bound price reserved for the job before it ran. */
  estimate: PriceQuote;
}
