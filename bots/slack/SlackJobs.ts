import type { webApi } from '@slack/bolt';
import { AbortedError, type LoggerLike } from 'pictor';
import {
  describeFailure,
  logJobFailure,
  mayCancel,
  say,
  sayWords,
  type FieldNames,
  type ImagesToFetch,
  type JobHandle,
  type JobIntent,
  type JobOptions,
  type JobRunner,
  type Requester,
} from '../runner/index.js';
import type { ChannelWriter } from './ChannelWriter.js';
import type { RequestStore, SavedRequest } from './RequestStore.js';
import { askHolderToCancel, cancelWhenAsked } from '../cancel-notices.js';
import { isRunning } from '../state/index.js';
import { InFlight } from '../runner/in-flight.js';
import { SlackJobView, type Notifier, type ShownEvent } from './SlackJobView.js';
import { jobMessageLinkOf, jobMessageSeenBy } from './slack-text.js';
import { ownDirectMessages } from './own-direct-messages.js';
import type { SentOnceClient } from './sent-once-client.js';

/** Ended jobs kept for a repair by button; each holds its final images until repaired. */
const MAX_UNREPAIRED = 50;

/**
 * What the Slack bot needs of the job runner: its intake — `request` for a job, `requestForm` before a form opens —
 * called once per entry point (through `SlackJobs`); `cancel` and `get` for the buttons; the budgets, rules and
 * history for the usage, admin and history commands.
 */
export type SlackJobRunner = Pick<JobRunner, 'request' | 'requestForm' | 'cancel' | 'get' | 'budgets' | 'policy' | 'history' | 'styles' | 'members' | 'audit' | 'recordEnded'>;

/** Who did something in Slack, and where. */
export interface SlackActor {
  userId: string;
  userName?: string | undefined;
  teamId: string;
  channelId: string;
  /** Their language, as Slack told it (`UserLocales`); English when unknown. */
  locale?: string | undefined;
}

export interface StartJob {
  kind: 'generate' | 'edit';
  prompt: string;
  options: JobOptions;
  /** An edit's images: Slack files downloaded once the runner admitted the job (`imagesOf`). */
  images?: ImagesToFetch | undefined;
  /** The Slack files the images come from, kept so Reroll can fetch them again. */
  inputFiles?: { id: string; name?: string | undefined }[] | undefined;
  actor: SlackActor;
  /** Where the job's message goes; in a thread when `threadTs` is set. */
  threadTs?: string | undefined;
  notify: Notifier;
  /** The Web API client of the actor's workspace (its bot token): every write of the job goes through it. */
  client: webApi.WebClient;
  /** How the request's fields are called where the person typed them (`--format` in `/imagine`, `format` in the modal). */
  fieldNames?: FieldNames | undefined;
  /** A house style the member picked (`--style`): the runner applies it; the saved request (Reroll, Edit, history) is the job as sent. */
  style?: string | undefined;
  /** `--private`/`--public` as the person chose (a Reroll or Edit of a private job: true); undefined: their default. */
  private?: boolean | undefined;
  /** Which of the member's own defaults apply (none for a workflow step, only previews on their own Reroll): see `JobIntent.memberDefaults`. */
  memberDefaults?: JobIntent['memberDefaults'];
  /** Run again by a job's button (Reroll), whoever's job it is: see `JobIntent.again`. */
  again?: JobIntent['again'];
  /** Asked with a form (the edit modal submitted): see `JobIntent.inForm`. */
  inForm?: JobIntent['inForm'];
  /** The Workflow Builder step the job runs for, saved with its request until the step is ended (`RequestStore.takeStep`). */
  step?: SavedRequest['step'];
}

export interface SlackJobsOptions {
  runner: SlackJobRunner;
  writer: ChannelWriter;
  store: RequestStore;
  adminUserIds: readonly string[];
  logger: LoggerLike;
  onShown?: ((event: ShownEvent) => void) | undefined;
  /** Where finished images go (see SlackJobViewOptions.finalImagesIn). */
  finalImagesIn?: 'channel' | 'thread' | undefined;
  /** A job was shown to its end (its images and buttons posted, or its failure): what a member's Home shows changed. */
  onJobShown?: ((actor: SlackActor) => void) | undefined;
  /** The app's `/imagine` command as configured: a refusal that names it says this one. */
  command?: string | undefined;
  /**
   * The client a job's own messages are posted with, given the job's: one that sends each call once (Slack makes a new
   * message of each `chat.postMessage` it gets) — its first message, within the first post's deadline, and its end when
   * posted anew — and reads back one whose answer was lost (`SentOnceClient`: a failure is read as Slack's answer lost
   * only for such a client).
   */
  firstPostClientOf: (client: webApi.WebClient) => SentOnceClient;
  /** How long a job's first message may take before the job is given up, nothing charged (see SlackJobViewOptions). */
  firstPostDeadlineMs?: number | undefined;
}

/** A job whose message is posted and that the runner does not have yet (an edit's images downloading). */
interface Starting {
  owner: Requester;
  view: SlackJobView;
  /** Who pressed its Cancel meanwhile: it is dropped before it is sent. */
  cancelledBy?: string | undefined;
}

/** A job the intake admitted: its handle, its saved request, and when it has been shown to its end. */
export interface StartedJob extends JobHandle {
  /** The saved request (what Reroll, Edit and Delete read; its `outputFiles` once the images are posted). */
  requestId: string;
  /** Settles once the job is shown to its end: its images and their buttons posted, its request saved. */
  shown: Promise<void>;
}

/**
 * Starts jobs for the Slack listeners: saves the request (for Reroll and Edit
 * after a restart), hands the runner a view of the job as its sink, and tells
 * the person why when the runner refuses (nothing is spent then).
 */
export class SlackJobs {
  readonly #o: SlackJobsOptions;
  /** The jobs this bot started, until shown to their end, and the ends its sweep records. */
  readonly #inFlight = new InFlight();
  /** Ended jobs whose message could not be brought to its end, by job id (oldest first, bounded): a button press tries again. */
  readonly #unrepaired = new Map<string, SlackJobView>();
  /** The runner's id of each job this process runs, by its request's id (for a Cancel pressed on another replica). */
  readonly #jobIdOf = new Map<string, string>();
  /** The jobs whose message is posted that the runner does not have yet, by their request's id (a Cancel drops them). */
  readonly #starting = new Map<string, Starting>();

  constructor(options: SlackJobsOptions) {
    this.#o = options;
  }

  /** With Redis: cancels this process's jobs that another replica is asked to cancel (as if the button was pressed here). */
  listenForCancels(): Promise<void> {
    return cancelWhenAsked(this.#o.store.space, (requestId, by) => {
      const jobId = this.#jobIdOf.get(requestId);
      if (jobId) this.#o.runner.cancel(jobId, by);
    });
  }

  /**
   * A Cancel for a job this process's runner does not run. One this process is still starting (its message posted, its
   * images downloading) is dropped before it is sent, nothing charged, its message showing it cancelled: 'asked'.
   * Else, with Redis, asks the replica that runs it, after the same check as here (`mayCancel`, from the saved
   * request: `request`, as the press read it, not read again). 'asked' when that replica got it; 'not_allowed'; or
   * undefined when no live replica runs the request's job.
   */
  async cancelElsewhere(requestId: string, request: SavedRequest | undefined, teamId: string, by: Requester): Promise<'asked' | 'not_allowed' | undefined> {
    const starting = this.#starting.get(requestId);
    if (starting && starting.owner.scopeId === teamId) {
      if (!mayCancel(starting.owner, by)) return 'not_allowed';
      if (!starting.cancelledBy) {
        starting.cancelledBy = by.userId;
        void starting.view.showCancelledBeforeStart(by.userId);
      }
      return 'asked';
    }
    if (request?.teamId !== teamId || !isRunning(request)) return undefined;
    const owner = this.requester({ userId: request.userId, teamId: request.teamId, channelId: request.channelId });
    if (!(await this.#o.store.space.heldElsewhere(requestId))) return undefined;
    if (!mayCancel(owner, by)) return 'not_allowed';
    return (await askHolderToCancel(this.#o.store.space, requestId, by)) ? 'asked' : undefined;
  }

  requester(actor: SlackActor): Requester {
    return {
      platform: 'slack',
      userId: actor.userId,
      userName: actor.userName,
      channelId: actor.channelId,
      scopeId: actor.teamId,
      isAdmin: this.#o.adminUserIds.includes(actor.userId),
      locale: actor.locale,
    };
  }

  /**
   * An entry point that opens a form (the edit modal) first: the runner's intake for a form — who and where, private
   * results (`form.private`: true for a private result's Edit; unset, the member's default), a budget left — then `open`
   * (within the trigger's 3 s), or the person is told privately why not. True when opened. `form.answerBy`: when the
   * intake must have decided by (`formBudget(…).endsAt`: the form's budget, the trigger's 3 s from the request's arrival less the form's trip);
   * a slow state makes it refuse privately by then rather than open the form with a trigger Slack no longer takes.
   */
  openForm(actor: SlackActor, notify: Notifier, open: () => Promise<void>, form: { private?: boolean | undefined; answerBy?: number | undefined } = {}): Promise<boolean> {
    return this.#o.runner.requestForm(this.requester(actor), { refuse: (reason) => this.#tellRefusal(reason, { actor, notify }), accept: open }, form);
  }

  /**
   * Starts a job through the runner's intake, the one call that decides it: a refusal is told privately (`notify`);
   * an admitted job gets its saved request (for Reroll and Edit after a restart) and its message, posted before the
   * runner has the job (one Slack refuses drops it), then its images are downloaded. Resolves with its handle, or
   * undefined when it did not start (the person has been told why; nothing is spent then) — also when anything failed
   * before the runner had the job (its request not saved): logged, and they are told privately it went wrong on our side.
   */
  async start(input: StartJob): Promise<StartedJob | undefined> {
    const requester = this.requester(input.actor);
    let request: SavedRequest | undefined;
    let view: SlackJobView | undefined;
    let starting: Starting | undefined;
    const handedOver = () => request && this.#starting.delete(request.id);
    // An edit's images are downloaded once its message is posted: a Cancel pressed meanwhile drops the job once they are here.
    const toFetch = input.images;
    const images: ImagesToFetch | undefined = toFetch && {
      declaredBytes: toFetch.declaredBytes,
      fetch: async () => {
        try {
          const fetched = await toFetch.fetch();
          // Cancelled meanwhile: the runner drops it, a cancel rather than a failure (`aborted`), and nothing is sent.
          if (starting?.cancelledBy) throw new AbortedError('the job was cancelled before it was sent', { mayBeBilled: false });
          return fetched;
        } finally {
          handedOver();
        }
      },
    };
    let handle: JobHandle | undefined;
    try {
      handle = await this.#o.runner.request(
        { kind: input.kind, prompt: input.prompt, options: input.options, requester, images, fieldNames: input.fieldNames, style: input.style, private: input.private, memberDefaults: input.memberDefaults, again: input.again, inForm: input.inForm },
        {
          refuse: (reason) => this.#tellRefusal(reason, input),
          accept: async (decided) => {
            // A private job lives in the member's direct messages with the bot (an ephemeral message can carry no files and
            // cannot be updated): its message, previews, images and buttons; the channel gets a note only they see.
            const dm = decided.private ? await ownDirectMessages(this.#o, input.client, input.actor.userId, input.notify, input.actor.locale) : undefined;
            if (decided.private && !dm) return undefined;
            request = await this.#o.store.create({
              kind: input.kind,
              // As sent and as it runs: a house style's text and options applied, the member's defaults filled in (what a
              // Reroll asks again).
              prompt: decided.prompt,
              options: decided.options,
              inputFiles: input.inputFiles,
              teamId: input.actor.teamId,
              userId: input.actor.userId,
              channelId: dm ?? input.actor.channelId,
              threadTs: dm ? undefined : input.threadTs,
              locale: input.actor.locale,
              status: 'active',
              // Its charge is found by it, should a stop cut the job off (the sweep's).
              runnerJobId: decided.id,
              ...(dm && { private: true as const, askedIn: input.actor.channelId }),
              ...(input.step && { step: input.step }),
            });
            const shown = new SlackJobView({
              client: input.client,
              writer: this.#o.writer,
              store: this.#o.store,
              request,
              inputCount: input.inputFiles?.length ?? 0,
              notify: input.notify,
              jobId: decided.id,
              logger: this.#o.logger,
              onShown: this.#o.onShown,
              finalImagesIn: this.#o.finalImagesIn,
              firstPostClient: this.#o.firstPostClientOf(input.client),
              firstPostDeadlineMs: this.#o.firstPostDeadlineMs,
            });
            // The job's message first: a job is sent (and may be charged) only once it is there. One Slack refuses (the bot
            // not in the channel, the channel archived, the DM closed) drops the job, nothing charged; the member is told why.
            if (!(await shown.postFirst())) {
              await this.#o.store.delete(request.id).catch((e: unknown) => this.#o.logger.warn({ err: String(e) }, 'could not delete the request of a job that did not start'));
              return undefined;
            }
            view = shown;
            // Its message has Cancel from now on: until the runner has the job, a Cancel drops it here (`cancelElsewhere`).
            starting = { owner: requester, view: shown };
            this.#starting.set(request.id, starting);
            // The note that it moved to the direct messages, only where it did: a private job asked in those very direct
            // messages (under the member's private default, or `--private`) stays private, with no note there.
            const notes = [dm && dm !== input.actor.channelId && say(input.actor.locale, 'slack.job.private_in_dm'), decided.ignoredDefaults && `:information_source: ${sayWords(input.actor.locale, decided.ignoredDefaults)}`].filter(Boolean);
            if (notes.length > 0) await input.notify(notes.join('\n')).catch((e: unknown) => this.#o.logger.warn({ err: String(e) }, 'could not tell a member about their job privately'));
            // Cancelled while the notes were sent: dropped before it is sent, nothing charged.
            if (starting.cancelledBy) return undefined;
            // A job with no images to download is the runner's once this returns.
            if (!images) handedOver();
            // The member's history (`/imagine history`) keeps the job under its request's id (Reroll from the history);
            // its message is linked from the history and the audit channel (`jobMessageLinkOf`); where a link to a message only
            // the member can open is kept (`jobMessageSeenBy`), `recordEnded` decides.
            const saved = request;
            const historyLink = async () => {
              const current = await this.#o.store.get(saved.id);
              return current && jobMessageLinkOf(current);
            };
            // Once the runner recorded the job's end: marked on the request, so no sweep records it again; a request its view
            // marked ended is let go of with it (held until then, with the end to record: `RequestStore.update`).
            const onEndRecorded = () => this.#o.store.update(saved.id, { endRecorded: true }).then(() => undefined);
            return { sink: view.sink, historyKey: request.id, historyLink, historyLinkSeenBy: jobMessageSeenBy(request), onEndRecorded };
          },
          fail: async (reason) => {
            // Cancelled before it was sent: its message shows that (see below), no refusal to tell.
            if (starting?.cancelledBy) return;
            // Its message was posted and would show it queued for ever: it goes, as the request does.
            await view?.withdraw();
            if (request) await this.#o.store.delete(request.id).catch(() => undefined);
            await this.#tellRefusal(reason, input);
          },
        },
      );
    } catch (error) {
      // Failed after the member's request was taken and before the runner had the job (its request not saved, say): nothing
      // was sent to the service. Every entry point gets the one rule: logged, and the member told privately, as a refusal is.
      if (!starting?.cancelledBy) {
        await view?.withdraw();
        if (request) await this.#o.store.delete(request.id).catch(() => undefined);
        request = undefined;
        // Who asked, by the fields every line of the runner's names them by.
        logJobFailure(this.#o.logger, error, { platform: requester.platform, scopeId: requester.scopeId, userId: requester.userId }, 'a Slack job failed before the runner had it: its member is told');
        // A workflow step fails with these words as plain text (no emoji there).
        const onMySide = say(input.actor.locale, 'error.on_my_side');
        await input.notify(input.step ? onMySide : `:warning: ${onMySide}`).catch((e: unknown) => this.#o.logger.warn({ err: String(e) }, 'could not tell a member that their job failed on our side'));
      }
    } finally {
      handedOver();
    }
    if (!handle && request && starting?.cancelledBy) {
      // Its message shows it cancelled, with Reroll: the request stays for that, ended, with no end to record.
      await this.#o.store.update(request.id, { status: 'ended' }).catch((e: unknown) => this.#o.logger.warn({ err: String(e) }, 'could not save the end of a job cancelled before it started'));
    }
    if (!handle || !request || !view) return undefined;
    const { id } = request;
    const shown = view;
    this.#jobIdOf.set(id, handle.id);
    const tracked = handle.done
      .catch(() => undefined)
      // A finished job is delivered with its images and their buttons; its message's "Done" may follow later.
      .then(() => shown.settled)
      .finally(() => {
        this.#jobIdOf.delete(id);
        if (shown.needsRepair) this.#keepForRepair(handle.id, shown);
        this.#o.onJobShown?.(input.actor);
      });
    this.#inFlight.track(tracked);
    return { ...handle, requestId: id, shown: tracked.then(() => undefined) };
  }

  /**
   * A button of an ended job whose message still shows it running (Slack
   * failed every try): shows the end now. True when the message was repaired.
   */
  async repair(jobId: string): Promise<boolean> {
    const view = this.#unrepaired.get(jobId);
    if (!view) return false;
    const repaired = await view.repair();
    if (repaired) this.#unrepaired.delete(jobId);
    return repaired;
  }

  /**
   * Tells the person privately why the runner's intake did not take their job or open their form: its refusal, or an
   * input image's own words (its download, once admitted), as `describeFailure` says either. The runner logged it (`JobRunner.request`, `requestForm`):
   * this only says it.
   */
  async #tellRefusal(error: unknown, input: Pick<StartJob, 'actor' | 'notify'>): Promise<void> {
    const { locale } = input.actor;
    // A refusal that names the command (`{command} settings --private off`) names the one this app has.
    const said = describeFailure(error, locale, this.#o.command).message;
    await input.notify(said).catch((e: unknown) => this.#o.logger.warn({ err: String(e) }, 'could not tell a user why a job was refused'));
  }

  #keepForRepair(jobId: string, view: SlackJobView): void {
    this.#unrepaired.set(jobId, view);
    for (const key of this.#unrepaired.keys()) {
      if (this.#unrepaired.size <= MAX_UNREPAIRED) break;
      this.#unrepaired.delete(key);
    }
  }

  /** Counts a job's end being recorded by the sweep (`sweepInterrupted`) among what `settle` waits for; a failure is the caller's to log. */
  track(recording: Promise<void>): void {
    this.#inFlight.track(recording);
  }

  /**
   * Waits for the jobs this bot started to be shown to their end, and the swept ends being recorded — those begun while
   * it waits too (a stop bounds the wait: `StopBudget.within`).
   */
  settle(): Promise<void> {
    return this.#inFlight.settled();
  }
}
