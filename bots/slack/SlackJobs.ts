import type { webApi } from '@slack/bolt';
import type { LoggerLike } from '../../src/index.js';
import {
  describeFailure,
  isJobRefusedError,
  mayCancel,
  type InputImage,
  type InputRoomHold,
  type JobHandle,
  type JobOptions,
  type JobRunner,
  type Requester,
} from '../runner/index.js';
import type { ChannelWriter } from './ChannelWriter.js';
import type { RequestStore } from './RequestStore.js';
import { askHolderToCancel, cancelWhenAsked } from '../state/index.js';
import { SlackJobView, type Notifier, type ShownEvent } from './SlackJobView.js';

/** Ended jobs kept for a repair by button; each holds its final images until repaired. */
const MAX_UNREPAIRED = 50;

/** What the Slack bot needs of the job runner. */
export type SlackJobRunner = Pick<JobRunner, 'submit' | 'cancel' | 'get' | 'budgets' | 'policy' | 'policyRefusal' | 'holdInputRoom' | 'history'>;

/** Who did something in Slack, and where. */
export interface SlackActor {
  userId: string;
  userName?: string | undefined;
  teamId: string;
  channelId: string;
}

export interface StartJob {
  kind: 'generate' | 'edit';
  prompt: string;
  options: JobOptions;
  images?: InputImage[] | undefined;
  /** The Slack files the images came from, kept so Reroll can fetch them again. */
  inputFiles?: { id: string; name?: string | undefined }[] | undefined;
  actor: SlackActor;
  /** Where the job's message goes; in a thread when `threadTs` is set. */
  threadTs?: string | undefined;
  notify: Notifier;
  /** The Web API client of the actor's workspace (its bot token): every write of the job goes through it. */
  client: webApi.WebClient;
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
}

/**
 * Starts jobs for the Slack listeners: saves the request (for Reroll and Edit
 * after a restart), hands the runner a view of the job as its sink, and tells
 * the person why when the runner refuses (nothing is spent then).
 */
export class SlackJobs {
  readonly #o: SlackJobsOptions;
  readonly #running = new Set<Promise<unknown>>();
  /** Ended jobs whose message could not be brought to its end, by job id (oldest first, bounded): a button press tries again. */
  readonly #unrepaired = new Map<string, SlackJobView>();
  /** The runner's id of each job this process runs, by its request's id (for a Cancel pressed on another replica). */
  readonly #jobIdOf = new Map<string, string>();

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
   * A Cancel for a job this process does not run: with Redis, asks the replica
   * that runs it, after the same check as here (`mayCancel`, from the saved
   * request). 'asked' when that replica got it; 'not allowed'; or undefined
   * when no live replica runs the request's job.
   */
  async cancelElsewhere(requestId: string, teamId: string, by: Requester): Promise<'asked' | 'not allowed' | undefined> {
    const request = await this.#o.store.get(requestId);
    if (request?.teamId !== teamId || request.status !== 'active') return undefined;
    const owner = this.requester({ userId: request.userId, teamId: request.teamId, channelId: request.channelId });
    if (!(await this.#o.store.space.heldElsewhere(requestId))) return undefined;
    if (!mayCancel(owner, by)) return 'not allowed';
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
    };
  }

  /**
   * Checks a job against its workspace's rules (who, where, what) before anything is fetched for it (an edit's images):
   * true when it is refused, and the person has been told why, as `start` tells them.
   */
  async refused(input: Pick<StartJob, 'kind' | 'prompt' | 'options' | 'actor' | 'notify'>): Promise<boolean> {
    const refusal = await this.#o.runner.policyRefusal({ kind: input.kind, prompt: input.prompt, options: input.options, requester: this.requester(input.actor) });
    if (!refusal) return false;
    await this.#tellRefusal(refusal, input);
    return true;
  }

  /**
   * Room in the runner's queue for an edit's images while they download (`downloadImages`' `holdRoom`): throws the
   * runner's `queue_full` refusal (counted as a refused job) when the queue has none, so nothing is downloaded.
   */
  roomFor(actor: SlackActor): (declaredBytes: number) => InputRoomHold {
    const requester = this.requester(actor);
    return (declaredBytes) => {
      const room = this.#o.runner.holdInputRoom(requester, declaredBytes);
      if (room instanceof Error) throw room;
      return room;
    };
  }

  /** Submits a job; resolves with its handle, or undefined when it was refused (the person has been told why). */
  async start(input: StartJob): Promise<JobHandle | undefined> {
    const requester = this.requester(input.actor);
    const request = await this.#o.store.create({
      kind: input.kind,
      prompt: input.prompt,
      options: input.options,
      inputFiles: input.inputFiles,
      teamId: input.actor.teamId,
      userId: input.actor.userId,
      channelId: input.actor.channelId,
      threadTs: input.threadTs,
      status: 'active',
    });
    const view = new SlackJobView({
      client: input.client,
      writer: this.#o.writer,
      store: this.#o.store,
      request,
      inputCount: input.images?.length ?? 0,
      notify: input.notify,
      cancel: (jobId) => this.#o.runner.cancel(jobId, requester),
      logger: this.#o.logger,
      onShown: this.#o.onShown,
      finalImagesIn: this.#o.finalImagesIn,
    });
    let handle: JobHandle;
    try {
      handle = await this.#o.runner.submit({ kind: input.kind, prompt: input.prompt, options: input.options, images: input.images, requester }, view.sink);
    } catch (error) {
      await this.#o.store.delete(request.id).catch(() => undefined);
      await this.#tellRefusal(error, input);
      return undefined;
    }
    this.#jobIdOf.set(request.id, handle.id);
    // The member's history (`/imagine history`), once the job has ended; a stop waits for it with the job. Not `input`: it holds the images.
    const ended = { key: request.id, kind: input.kind, prompt: input.prompt, options: input.options };
    const tracked = handle.done
      .then((final) => this.#o.runner.history?.recordEnd(requester, ended, final))
      .catch(() => undefined)
      // A finished job is delivered with its images and their buttons; its message's "Done" may follow later.
      .then(() => view.settled)
      .finally(() => {
        this.#running.delete(tracked);
        this.#jobIdOf.delete(request.id);
        if (view.needsRepair) this.#keepForRepair(handle.id, view);
      });
    this.#running.add(tracked);
    return handle;
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

  async #tellRefusal(error: unknown, input: Pick<StartJob, 'actor' | 'notify'>): Promise<void> {
    const failure = describeFailure(error);
    if (!isJobRefusedError(error)) this.#o.logger.error({ code: failure.code, err: error }, 'the runner did not take a Slack job');
    else this.#o.logger.info({ code: failure.code, user: input.actor.userId }, 'a Slack job was refused');
    await input.notify(failure.message).catch((e: unknown) => this.#o.logger.warn({ err: String(e) }, 'could not tell a user why a job was refused'));
  }

  #keepForRepair(jobId: string, view: SlackJobView): void {
    this.#unrepaired.set(jobId, view);
    for (const key of this.#unrepaired.keys()) {
      if (this.#unrepaired.size <= MAX_UNREPAIRED) break;
      this.#unrepaired.delete(key);
    }
  }

  /** Waits (up to `timeoutMs`) for the jobs this bot started to be shown to their end. */
  async settle(timeoutMs: number): Promise<void> {
    if (this.#running.size === 0) return;
    await Promise.race([Promise.allSettled([...this.#running]), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }
}
