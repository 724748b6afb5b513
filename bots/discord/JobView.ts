import type { LoggerLike, OutputFormat } from 'pictor';
import { describeKeptImages, fileSize, say, type Words } from '../runner/index.js';
import { jobEndOf, type JobEnd } from '../runner/job-history.js';
import { formatsOf, type JobUpdate, type UpdateSink } from '../runner/types.js';
import { uploadLimitOf } from './discord-facts.js';
import { fitImage, type OutgoingFile } from './fit-images.js';
import { packFiles } from './pack-files.js';
import { finalShownOf, whyNotRunAgain } from './job-rules.js';
import type { FinalKept, FinalShown, JobRecordStore } from './JobRecordStore.js';
import {
  allImages,
  renderCancelled,
  renderCompleted,
  renderFailure,
  renderKeptResult,
  renderPartial,
  renderQueued,
  renderStarted,
  type JobHeader,
  type OutgoingMessage,
  type ShownImages,
} from './render-job.js';
import type { ReplyTarget } from './ReplyTarget.js';
import { loggableError } from './loggable-error.js';

export interface JobViewOptions {
  target: ReplyTarget;
  header: JobHeader;
  store: JobRecordStore;
  /** The interaction's `attachment_size_limit` (bytes per file): its images are fitted to `uploadLimitOf` it. */
  attachmentSizeLimit: number;
  logger: LoggerLike;
}

export type Completed = Extract<JobUpdate, { type: 'completed' }>;

/** The images a job made before it failed or was cancelled, each with its format (in the order of `images`). */
export interface MadeImages {
  images: Buffer[];
  formats: OutputFormat[];
}

/** A finished job's images a record of an older version kept without the facts of its result (the sweep shows them). */
export interface KeptImages {
  type: 'kept';
  images: Buffer[];
  /** Each image's format, in the order of `images`. */
  formats: OutputFormat[];
}

/**
 * Renders one job's updates into its Discord reply: the runner hands them over
 * one at a time (already coalesced and paced) and waits for each, and
 * discord.js's REST queue keeps the edits within Discord's rate limits. Only
 * rendering and transport live here.
 */
export class JobView {
  readonly #o: JobViewOptions;
  #lastAhead: number | undefined;
  #lastNotice: Words | undefined;
  #finished = false;
  #final: FinalShown | undefined;
  /**
   * Whether the final message (its result, failure or cancellation) reached Discord: its first message, the end itself —
   * shown again by a sweep, it would be shown twice (a follow-up that failed, its images, is not what the sweep shows).
   */
  #finalShown = false;
  /** Hand this to `runner.submit`. Never throws: a failed edit is logged, and the next update still comes. */
  readonly sink: UpdateSink = async (update) => {
    try {
      await this.#show(update);
    } catch (error) {
      this.#o.logger.error({ err: loggableError(error), jobKey: this.#o.header.key, update: update.type }, 'could not show a job update on Discord');
    }
  };

  constructor(options: JobViewOptions) {
    this.#o = options;
  }

  async #show(update: JobUpdate): Promise<void> {
    if (this.#finished) return;
    const { header, target } = this.#o;
    switch (update.type) {
      case 'queued':
        if (update.ahead === this.#lastAhead && update.notice === this.#lastNotice) return;
        this.#lastAhead = update.ahead;
        this.#lastNotice = update.notice;
        await target.progress(renderQueued(header, update.ahead, update.notice));
        return;
      case 'started':
        await target.progress(renderStarted(header));
        return;
      case 'partial': {
        const name = `preview-${update.imageIndex + 1}-${update.partialIndex + 1}`;
        // The runner's preview (display size, light format): its name and content type follow its format.
        const preview = await update.preview();
        const fitted = await fitImage(preview.data, preview.format, name, uploadLimitOf(this.#o));
        await target.progress(renderPartial(header, update, fitted.file));
        return;
      }
      case 'completed':
        this.#finished = true;
        this.#final = finalShownOf(update);
        await this.#showCompleted(update);
        return;
      case 'failed': {
        this.#finished = true;
        const final = (this.#final = finalShownOf(update));
        const made = await this.#keepMade(update, final);
        const message = renderFailure(header, update, await this.#canRunAgain(), made && allImages(made.images.length));
        this.#finalShown = (await target.final(await this.#withImages(message, made))).first;
        await this.#mark(jobEndOf(update), made);
        return;
      }
      case 'cancelled': {
        this.#finished = true;
        const final = (this.#final = finalShownOf(update));
        const made = await this.#keepMade(update, final);
        const message = renderCancelled(header, update, await this.#canRunAgain(), made && allImages(made.images.length));
        this.#finalShown = (await target.final(await this.#withImages(message, made))).first;
        await this.#mark(jobEndOf(update), made);
        return;
      }
    }
  }

  async #showCompleted(update: Completed): Promise<void> {
    const { header, store, logger } = this.#o;
    // Saved before the buttons appear, so Edit works even after a restart; with the facts the result shows, so a process
    // that dies before the result reaches Discord leaves it to the next one's sweep (sweep-interrupted.ts).
    const { type: _type, jobId: _jobId, images: _images, usage: _usage, ...facts } = update;
    await store
      .saveOutputs(header.key, update.images, formatsOf(update, update.images.length), { result: { ...facts, attachmentSizeLimit: this.#o.attachmentSizeLimit } })
      .catch((err: unknown) => logger.error({ err: loggableError(err), jobKey: header.key }, 'could not save a job’s images for its Edit buttons'));
    await this.showResult(update);
    await this.#mark(jobEndOf(update));
  }

  /**
   * The job's final update as its record keeps it for a sweep when its mark failed (`markEndRecorded`): once its message
   * reached Discord, only how it ended (`shown`: the sweep marks it and says nothing); else what that message shows (its
   * images aside), for the sweep to show it. Undefined before the runner handed a final update over.
   */
  get final(): FinalKept | undefined {
    return this.#final && (this.#finalShown ? { ...this.#final, shown: true } : this.#final);
  }

  /** Whether `showResult` got the result to Discord, its first message (its record's mark may still have failed). */
  get resultShown(): boolean {
    return this.#finalShown;
  }

  /**
   * A finished job's result as its final message, with Reroll/Edit/Delete: the completed update (its images and facts),
   * or the images a record of an older version kept without facts (a line says they were made and charged). The sweep
   * shows with it a result whose images were saved by a process that stopped before showing it: `kept` says which saved
   * images they are (their Edit buttons open those, and are numbered as them) and, first among the notes, how many are
   * no longer kept. The view shows; its record's mark is the caller's (the live path marks it next, the sweep too).
   */
  async showResult(result: Completed | KeptImages, kept: ShownImages & { notes: readonly string[] } = { ...allImages(result.images.length), notes: [] }): Promise<void> {
    this.#finished = true;
    const { header, target, logger } = this.#o;
    const { files, notes } = await this.#fit(result.images, formatsOf(result, result.images.length), kept);
    const packs = packFiles(files, uploadLimitOf(this.#o));
    const first = packs[0] ?? [];
    const said = [...kept.notes, ...notes];
    const message = result.type === 'completed' ? renderCompleted(header, result, first, said, kept) : renderKeptResult(header, first, said, kept);
    const delivered = await target.final(this.#spread(message, packs));
    this.#finalShown = delivered.first;
    logger.info({ jobKey: header.key, images: result.images.length, uploaded: files.length, delivered: delivered.all, firstDelivered: delivered.first, via: target.mode, facts: result.type === 'completed' }, 'job result shown on Discord');
  }

  /**
   * The record's end, once its final message is shown (`markEnded` tries again before it throws): a stop after it does
   * not show the job again. With the end the runner records next, which keeps the record held until it is recorded
   * (`markEndRecorded`): a stop before that leaves it to the next sweep, which records that end and shows nothing. A
   * failure or cancellation shown with paid images (`made`) says how many, even when their save failed: its Retry
   * then runs in a new message, leaving them shown. An end no message took keeps what it shows (`unshown`).
   */
  async #mark(end: JobEnd, made?: MadeImages): Promise<void> {
    // An end no message took (the reply's edit refused, the channel too): kept, so its Cancel shows it to its member.
    const unshown = !this.#finalShown && this.#final ? { unshown: this.#final } : {};
    await this.#o.store.markEnded(this.#o.header.key, end.type, { end, ...(made && { made: made.images.length }), ...unshown });
  }

  /**
   * Whether the job can run again as its end is shown — its Retry offered by the one rule (`whyNotRunAgain`), from its
   * record as kept now: its member's forget while it ran erased its prompt there. A record that cannot be read keeps the
   * Retry, whose button asks the rule again when pressed.
   */
  async #canRunAgain(): Promise<boolean> {
    try {
      const record = await this.#o.store.get(this.#o.header.key);
      return record === undefined || whyNotRunAgain(record, Date.now()) === undefined;
    } catch (error) {
      this.#o.logger.warn({ err: loggableError(error), jobKey: this.#o.header.key }, 'could not read a job’s record to tell whether it can run again; its Retry is offered');
      return true;
    }
  }

  /**
   * The images a job finished before it failed or was cancelled: made and charged, shown with its end with their Edit
   * and Delete buttons. Saved first as a result's are (so Edit works after a restart too), in the one write with the
   * end they are shown with (`final`): a process that stops before that end is marked leaves the next sweep that end to
   * show with them, and to record — never a result. Undefined when it came with none.
   */
  async #keepMade(update: { images?: Buffer[] | undefined; formats?: OutputFormat[] | undefined }, final: FinalShown): Promise<MadeImages | undefined> {
    const images = update.images ?? [];
    if (images.length === 0) return undefined;
    const formats = formatsOf(update, images.length);
    const { header, store, logger } = this.#o;
    await store
      .saveOutputs(header.key, images, formats, { final })
      .catch((err: unknown) => logger.error({ err: loggableError(err), jobKey: header.key }, 'could not save a job’s images for its Edit buttons'));
    return { images, formats };
  }

  /**
   * A failure or cancellation shown again by the sweep, with the images kept of those its job made before it (`shown`:
   * which of them they are): answers whether its first message reached Discord. Its record's mark is the caller's.
   */
  async showEnd(message: OutgoingMessage, made: MadeImages | undefined, shown?: ShownImages): Promise<boolean> {
    this.#finished = true;
    this.#finalShown = (await this.#o.target.final(await this.#withImages(message, made, shown))).first;
    return this.#finalShown;
  }

  /** A final message with the images a job finished before it failed or was cancelled (none: the message alone). */
  async #withImages(message: OutgoingMessage, made: MadeImages | undefined, shown?: ShownImages): Promise<OutgoingMessage[]> {
    if (!made || made.images.length === 0) return [message];
    const { files, notes } = await this.#fit(made.images, made.formats, shown);
    const packs = packFiles(files, uploadLimitOf(this.#o));
    const first = { ...message, content: [message.content, describeKeptImages(made.images.length, this.#o.header.locale), ...notes].join('\n'), files: packs[0] ?? [] };
    return this.#spread(first, packs);
  }

  /**
   * Each image as an upload Discord takes (`uploadLimitOf`: the server's limit of one file, within what one request
   * takes), with a note for what had to change (or could not fit); named and numbered as the job's images `shown` says
   * they are.
   */
  async #fit(images: Buffer[], formats: readonly OutputFormat[], shown: ShownImages = allImages(images.length)): Promise<{ files: OutgoingFile[]; notes: string[] }> {
    const { header } = this.#o;
    const limit = uploadLimitOf(this.#o);
    const files: OutgoingFile[] = [];
    const notes: string[] = [];
    for (const [i, image] of images.entries()) {
      const number = (shown.indices[i] ?? i) + 1;
      const fitted = await fitImage(image, formats[i]!, `pictor-${header.key}-${number}`, limit);
      const which = { images: shown.made, index: number, limit: fileSize(limit) };
      if (!fitted.file) {
        notes.push(say(header.locale, 'discord.job.too_large_to_upload', which));
        continue;
      }
      if (fitted.reencodedAs) {
        notes.push(say(header.locale, 'discord.job.reencoded', { ...which, format: fitted.reencodedAs.toUpperCase(), shrunk: fitted.scale ? 'yes' : 'no', percent: Math.round((fitted.scale ?? 1) * 100) }));
      }
      files.push(fitted.file);
    }
    return { files, notes };
  }

  /**
   * The first message, carrying the first of the files' packs (`packFiles`: as many as one message takes), then one
   * message for each pack after it, saying which images it holds.
   */
  #spread(first: OutgoingMessage, packs: readonly OutgoingFile[][]): OutgoingMessage[] {
    const of = packs.reduce((count, pack) => count + pack.length, 0);
    const messages: OutgoingMessage[] = [first];
    let shown = packs[0]?.length ?? 0;
    for (const files of packs.slice(1)) {
      const content = say(this.#o.header.locale, 'discord.job.more_images', { from: shown + 1, to: shown + files.length, of });
      messages.push({ content, components: [], files });
      shown += files.length;
    }
    return messages;
  }
}
