import { randomBytes } from 'node:crypto';
import { FILE_EXTENSIONS, type LoggerLike, type OutputFormat } from 'pictor';
import { safeJson } from 'pictor/internal';
import { formatsOf, type InputImage, type JobCost, type JobOptions, type JobUpdate, type Requester } from '../runner/types.js';
import { words, type Words } from '../runner/words.js';
import type { JobEnd } from '../runner/job-history.js';
import { botSpaces, endToRecord, forgetJobRecord, imagesToKeep, isDone, isRunning, keepsNoEnd, MAX_KEPT_IMAGE_BYTES, promptErased, releaseWhenDone, withDraft, type BotState, type Space, type StatusWords } from '../state/index.js';
import { COMMAND_NAMES } from './command-words.js';
import type { AttachmentSource } from './download-images.js';
import { loggableError } from './loggable-error.js';

/** A job record's status: each word names its phase in the one release rule (`bots/state/job-records.ts`). */
export type JobRecordStatus = StatusWords<'draft' | 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'refused'>;

/** A kept image: its key in the images space. */
export interface StoredImage {
  file: string;
  /** The name it came with, if any. */
  filename?: string | undefined;
  bytes?: number | undefined;
  /**
   * Which of the images given it is (0-based: for outputs, the job's image), as one left out (too large, a failed write)
   * leaves a gap; undefined in records kept before it, whose images are read by their position.
   */
  index?: number | undefined;
}

/** Which of the job's images a kept output is (0-based): its `index`, or in a record kept before it, its position among the outputs. */
export function outputIndex(img: StoredImage, position: number): number {
  return img.index ?? position;
}

/** A record's kept output that is the job's image `index` (what an Edit button names); undefined when it was not kept. */
export function keptOutput(record: Pick<JobRecord, 'outputs'>, index: number): StoredImage | undefined {
  return record.outputs.find((img, position) => outputIndex(img, position) === index);
}

/** How many images a finished job made (its buttons' count), whether or not each was kept. */
export function madeCount(record: Pick<JobRecord, 'outputs' | 'made'>): number {
  return record.made ?? record.outputs.length;
}

/** How long the images of a Discord job are kept (the images space's TTL, from their write as the job's record is made). */
export const KEPT_IMAGES_MS = botSpaces().discordImages.ttlMs;

/**
 * Why a job cannot run again (its Retry and Reroll), or undefined when it can: its member erased its prompt (`forget`),
 * or it is an edit whose input images are no longer kept — none was (a failed write), or, asked with `now` (a message
 * deciding whether to offer Retry), they are likely gone: older than the images space keeps any (`KEPT_IMAGES_MS` since
 * its record was made). The one rule: those buttons refuse by it (without `now`: whether the images are kept decides the
 * age — a look before the first answer (`inputsKept`), then their read — as images moved by an upgrade are kept from their move, not from their record's making), and a message offers
 * Retry only when it holds.
 */
export function whyNotRunAgain(record: Pick<JobRecord, 'prompt' | 'kind' | 'inputs' | 'createdAt'>, now?: number): Words | undefined {
  if (promptErased(record)) return words('job.prompt_erased');
  if (record.kind === 'edit' && (record.inputs.length === 0 || (now !== undefined && now - record.createdAt > KEPT_IMAGES_MS))) return words('discord.button.too_old', COMMAND_NAMES);
  return undefined;
}

/** What a button needs to act on a job after a restart or on another replica: the job spec and its kept images. */
export interface JobRecord {
  /** Short id used in custom_ids. */
  key: string;
  kind: 'generate' | 'edit';
  prompt: string;
  options: JobOptions;
  requester: Requester;
  createdAt: number;
  status: JobRecordStatus;
  runnerJobId?: string | undefined;
  inputs: StoredImage[];
  /** The images kept of those the job made (each with its `index` among them): some may be left out. */
  outputs: StoredImage[];
  /** How many images the job made, saved with its outputs (records kept before it: their outputs' count). */
  made?: number | undefined;
  /** A draft of the "Edit image" menu: the attachments to fetch when its modal is sent. */
  sources?: AttachmentSource[] | undefined;
  /** Pending or running jobs only: the reply to edit if the process dies before the job ends (dropped when it ends). */
  reply?: ReplyHandle | undefined;
  /** The language of the job's public messages (`JobHeader.locale`); English for records made before it was kept. */
  locale?: string | undefined;
  /** Shown only to its requester (ephemeral): its Reroll, Retry and Edit are private too, and so is its end after a restart. */
  private?: boolean | undefined;
  /**
   * A finished job's facts, saved with its images before its result is shown: a process that dies before the result
   * reaches Discord leaves them to the next one's sweep, which shows that result instead of "interrupted".
   */
  result?: KeptResult | undefined;
  /**
   * The job's end was recorded (the runner's `recordEnded`: the member's history and the audit channel), saved by the
   * live path once the runner recorded it; a record the sweep shows without it (a stop before its end) has its end
   * recorded there, one with it not again.
   */
  endRecorded?: true | undefined;
  /**
   * The end the runner is to record (its history entry and audit entry), saved by the live view with the status it
   * marks once the job's final message is shown, until `endRecorded`: the record stays held by its process meanwhile,
   * and one a stop left so is claimed by the next sweep, which records this end (and shows nothing).
   */
  end?: JobEnd | undefined;
  /**
   * The job's final update, saved with `endRecorded` on a record still pending or running — its view could not mark it
   * ended (or not show it): when its message reached Discord, only how it ended (`shown`), and the sweep marks it so,
   * saying nothing; else what that message shows (no images), and the sweep shows this end (the failure, the
   * cancellation, the result) rather than "interrupted". Dropped with `end` once the record is marked ended. A failure
   * or cancellation that came with images is saved here by its view too, in the write that keeps them (`saveOutputs`),
   * before `endRecorded`: a stop before its mark leaves the sweep that end to show with them, and to record.
   */
  final?: FinalKept | undefined;
  /**
   * When a sweep (or a Cancel on the job) last tried to post that a job which made nothing was stopped and no post
   * reached Discord: once it is older than its kept images, such a job is marked ended saying nothing rather than tried
   * at every start; one never tried is still told "stopped", however old.
   */
  sweptAt?: number | undefined;
}

/**
 * What a job's final message shows besides its images: the facts a sweep needs to show it again. A failed or cancelled
 * job's `cost` is what the ledger charges it (its charge line); absent when it was released, and in finals of older versions.
 */
export type FinalShown =
  | { type: 'completed' }
  | { type: 'failed'; code: string; words: Words; retryable: boolean; cost?: JobCost | undefined }
  | { type: 'cancelled'; byUserId: string; reason?: 'requested' | 'shutdown' | undefined; cost?: JobCost | undefined };

/**
 * A final update as a record still running keeps it once its runner recorded its end: what its message shows when that
 * message did not reach Discord (the sweep shows it), else how it ended, `shown` (the sweep marks it, saying nothing),
 * with what it showed when that was kept (a Cancel pressed on its "Drawing…" message shows that end there again).
 */
export type FinalKept = FinalShown | (FinalShown & { shown: true }) | { type: FinalShown['type']; shown: true };

/** The facts of a job's final update its message shows (`FinalShown`), a failure's or a cancel's charge with them: never its images. */
export function finalShownOf(final: Extract<JobUpdate, { type: 'completed' | 'failed' | 'cancelled' }>): FinalShown {
  switch (final.type) {
    case 'completed':
      return { type: 'completed' };
    case 'failed':
      return { type: 'failed', code: final.code, words: final.words, retryable: final.retryable, ...chargeOf(final) };
    case 'cancelled':
      return { type: 'cancelled', byUserId: final.byUserId, ...(final.reason && { reason: final.reason }), ...chargeOf(final) };
  }
}

/** A failed or cancelled job's charge as its final keeps it: the amount alone (none when it was released). */
function chargeOf(final: { cost?: JobCost | undefined }): { cost?: JobCost } {
  return final.cost ? { cost: { totalUsd: final.cost.totalUsd } } : {};
}

/** What a finished job's result shows besides its images (the runner's `completed` update without them; a record kept before `formats` has `format`, read by `formatsOf`). */
export type KeptResult = Omit<Extract<JobUpdate, { type: 'completed' }>, 'type' | 'jobId' | 'images' | 'usage' | 'formats'> & { formats?: OutputFormat[] | undefined; format?: OutputFormat | undefined } & {
  /** The interaction's limit for one upload (bytes), which the images were fitted to. */
  attachmentSizeLimit: number;
};

/** An interaction's reply, as a later process can edit it (until the token expires, 15 minutes after `issuedAt`). */
export interface ReplyHandle {
  applicationId: string;
  token: string;
  issuedAt: number;
  /** Where the job was asked: its server's id, `null` in a DM (what its link opens: `linkPlaceOf`); unknown on older records. */
  guildId?: string | null | undefined;
}

export type NewJobRecord = Omit<JobRecord, 'inputs' | 'outputs' | 'createdAt' | 'endRecorded' | 'final'> & { createdAt?: number };
/** A change of a record's fields (`endRecorded` and `final` are set by `markEndRecorded` alone). */
export type JobRecordPatch = Partial<Pick<JobRecord, 'status' | 'runnerJobId' | 'prompt' | 'sources' | 'end' | 'sweptAt' | 'final' | 'made'>>;

/**
 * What a write leaves of a record, decided from the record as changed (by `update` and `markEndRecorded` alike): once
 * it ended with its end recorded, neither that end nor the final its sweep would have shown is kept, and once it is
 * done its reply token goes too (its message is not shown again). A record still pending or running keeps them: its
 * sweep shows its end from them.
 */
function settled(record: JobRecord): JobRecord {
  if (keepsNoEnd(record)) {
    delete record.end;
    delete record.final;
  }
  // An ended job's reply is of use until its end is recorded: the recorded end carries the link to its message.
  if (isDone(record)) delete record.reply;
  return record;
}

/** How many times `markEnded` tries before it throws the failure, and the pause after a failed try (times the tries so far). */
const MARK_ATTEMPTS = 3;
const MARK_RETRY_MS = 200;

/**
 * The Discord jobs in the bots' state (with Redis a button works whichever replica gets it). A pending or running
 * record is held by the process running its job, and so is an ended one whose end is still to be recorded (`end`
 * without `endRecorded`); each is claimed by one survivor when that process is gone (`claimInterrupted`).
 * Images are copies bounded by the images space: a job whose images are gone says it is too old.
 */
export class JobRecordStore {
  /** The records (a Cancel on another replica reaches the job's process through them). */
  readonly records: Space<JobRecord>;
  /** The images' bytes (0.1's Redis records, JSON with base64, are read as well). */
  readonly #images: Space<Buffer>;
  readonly #drafts: Space<{ key: string; createdAt: number }[]>;
  /** Runner job id → the record that kept its images (the console's thumbnails). */
  readonly #outputsOfJob: Space<{ key: string }>;
  readonly #logger: LoggerLike;
  /** Records being added: visible to `get` from the moment `add` is called (a modal's submit may come before the write ends). */
  readonly #adding = new Map<string, JobRecord>();
  /** Leftover records this process is showing (its sweep's, or a Cancel's on a job no runner knows): `showAlone`. */
  readonly #showing = new Set<string>();

  constructor(options: { state: BotState; logger: LoggerLike }) {
    const { store, spaces } = options.state;
    this.records = store.space(spaces.discordJobs);
    this.#images = store.space(spaces.discordImages);
    this.#drafts = store.space(spaces.discordDrafts);
    this.#outputsOfJob = store.space(spaces.discordJobOutputs);
    this.#logger = options.logger;
  }

  /** A new key (11 URL-safe characters). */
  newKey(): string {
    return randomBytes(8).toString('base64url');
  }

  async get(key: string): Promise<JobRecord | undefined> {
    const adding = this.#adding.get(key);
    return adding ? structuredClone(adding) : this.records.get(key);
  }

  /** Adds a record and keeps its input images; while pending or running, this process holds it. */
  async add(init: NewJobRecord, inputs: readonly InputImage[] = []): Promise<JobRecord> {
    const record: JobRecord = { ...structuredClone(init), createdAt: init.createdAt ?? Date.now(), inputs: [], outputs: [] };
    this.#adding.set(record.key, record);
    try {
      if (inputs.length) record.inputs = await this.#keep(record.key, 'in', inputs);
      await this.records.put(record.key, record, { hold: isRunning(record) });
    } finally {
      this.#adding.delete(record.key);
    }
    if (record.status === 'draft') {
      const draft = { key: record.key, createdAt: record.createdAt };
      await this.#drafts.update(record.requester.userId, (own) => withDraft(own, draft));
    }
    return record;
  }

  /**
   * Changes a record's fields; a record that was dropped meanwhile is ignored. A change that leaves a job ended with
   * nothing left to do (its end recorded, or none to record) releases it, in its one write; one whose end is still to
   * be recorded (the live view's mark, before the runner records it) stays held until `markEndRecorded`. What it keeps
   * of its end and its reply is `settled`'s rule, and whether it is released the state's (`releaseWhenDone`).
   */
  async update(key: string, patch: JobRecordPatch): Promise<void> {
    await this.records.update(key, (record) => record && settled(Object.assign(record, structuredClone(patch))), { hold: releaseWhenDone });
  }

  /**
   * A job's end, once it is shown (its result, failure, cancellation, or the sweep's word on it; the live view's and the
   * sweep's with the `end` the runner is to record, which keeps the record held until `markEndRecorded`; with the paid images it showed, `made`): tried again a few times,
   * each failure logged, then the last one thrown — a record left pending or running is swept by the next start, which
   * shows its end again (its result twice, or "no longer kept" once its images are gone).
   */
  async markEnded(key: string, status: 'completed' | 'failed' | 'cancelled', also: Pick<JobRecordPatch, 'end' | 'made'> = {}): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.update(key, { ...also, status });
        return;
      } catch (error) {
        if (attempt >= MARK_ATTEMPTS) throw error;
        this.#logger.warn({ err: loggableError(error), jobKey: key, status, attempt }, 'could not mark a job ended; trying again');
        await new Promise((resolve) => setTimeout(resolve, MARK_RETRY_MS * attempt));
      }
    }
  }

  /**
   * Saves that the runner recorded the job's end (`endRecorded`), in one update, with its `final` (`FinalKept`: whether
   * its message reached Discord, else what it shows). A record marked ended (its view showed and marked it, or the sweep
   * did) is released with it, nothing being left to do of it, and keeps neither. One still pending or running (its view
   * could not mark it) stays held and keeps `final`, for the sweep to mark it ended — showing that end, not
   * "interrupted", only when its message did not reach Discord — its end recorded again only for the link to the message it shows. Decided from
   * the record as changed: a record marked ended by a write whose answer was lost is released too.
   */
  async markEndRecorded(key: string, final?: FinalKept): Promise<void> {
    await this.records.update(key, (record) => record && settled({ ...record, endRecorded: true, ...(final && { final: structuredClone(final) }) }), { hold: releaseWhenDone });
  }

  /** The member's drafts of the "Edit image" menu, oldest first. */
  async drafts(userId: string): Promise<JobRecord[]> {
    const found: JobRecord[] = [];
    for (const { key } of (await this.#drafts.get(userId)) ?? []) {
      const record = await this.records.get(key);
      if (record?.status === 'draft' && record.requester.userId === userId) found.push(record);
    }
    return found.sort((a, b) => a.createdAt - b.createdAt);
  }

  /**
   * Keeps a finished job's images, for its Edit buttons — each named for its own format (`formats`, in their order, as
   * `formatsOf` reads them: one given names all) — and, in the same write, given, the facts its result shows (`result`) or the failure or
   * cancellation they came with (`final`), for a sweep to show that end with them.
   */
  async saveOutputs(key: string, images: readonly Buffer[], formats: readonly OutputFormat[], also: { result?: KeptResult; final?: FinalShown } = {}): Promise<void> {
    const named = formatsOf({ formats }, images.length).map((format, i) => ({ data: images[i]!, filename: `image-${i + 1}.${FILE_EXTENSIONS[format]}` }));
    const outputs = await this.#keep(key, 'out', named);
    const { result, final } = also;
    const { after } = await this.records.update(key, (record) => record && { ...record, outputs, made: images.length, ...(result && { result: structuredClone(result) }), ...(final && { final: structuredClone(final) }) });
    if (after?.runnerJobId && outputs.length > 0) await this.#outputsOfJob.put(after.runnerJobId, { key });
  }

  /**
   * Which of a runner job's images (its id in the ledger) are kept, for the console's thumbnails: their indices in the
   * job's numbering, as its Edit buttons name them (0-based, ascending) — one left out (too large, a failed write) is
   * not among them, never a shift of those after it, nor one the images' bound dropped since (the images space drops
   * the oldest without touching the records: one `has` per image asked); undefined when none is kept. Given `atMost`,
   * the first `atMost` of them: the images are asked in the job's order, `atMost` at a time side by side, and only those
   * still missing after a round are asked of the next ones.
   */
  async keptOutputs(runnerJobId: string, atMost = Number.POSITIVE_INFINITY): Promise<number[] | undefined> {
    const link = await this.#outputsOfJob.get(runnerJobId);
    const outputs = link ? ((await this.records.get(link.key))?.outputs ?? []) : [];
    const listed = outputs.map((img, position) => ({ file: img.file, index: outputIndex(img, position) })).sort((a, b) => a.index - b.index);
    const indices: number[] = [];
    for (let next = 0; next < listed.length && indices.length < atMost; ) {
      const asked = listed.slice(next, (next += atMost - indices.length));
      const there = await Promise.all(asked.map((img) => this.#images.has(img.file)));
      indices.push(...asked.filter((_, i) => there[i]).map((img) => img.index));
    }
    return indices.length > 0 ? indices : undefined;
  }

  /** Whether a runner job's image `index` (the job's numbering) is kept still: one `has`, whatever the job's count of images. */
  async hasKeptOutput(runnerJobId: string, index: number): Promise<boolean> {
    const img = await this.#keptOutputOfJob({ runnerJobId }, index);
    return img ? this.#images.has(img.file) : false;
  }

  /** A runner job's image `index` (the job's own numbering, as its Edit button's), if it was kept and still is. */
  async readKeptOutput(runnerJobId: string, index: number): Promise<InputImage | undefined> {
    const img = await this.#keptOutputOfJob({ runnerJobId }, index);
    return img ? this.#read(img) : undefined;
  }

  /**
   * Whether a record's input images are all still kept (it names some): one `has` each, side by side, no bytes read —
   * for a button to refuse an edit whose images are gone before it answers; `readInputs` still decides at the read.
   */
  async inputsKept(record: Pick<JobRecord, 'inputs'>): Promise<boolean> {
    if (record.inputs.length === 0) return false;
    const there = await Promise.all(record.inputs.map((img) => this.#images.has(img.file)));
    return there.every(Boolean);
  }

  /** The record's input images; empty when any of them is no longer kept (a job's inputs go together). */
  async readInputs(key: string): Promise<InputImage[]> {
    const record = await this.records.get(key);
    const images = await Promise.all((record?.inputs ?? []).map((img) => this.#read(img)));
    return images.every((img): img is InputImage => img !== undefined) ? images : [];
  }

  /** The job's output image `index` (as its Edit button names it), if it was kept and still is. */
  async readOutput(key: string, index: number): Promise<InputImage | undefined> {
    const img = await this.#keptOutputOfJob({ key }, index);
    return img ? this.#read(img) : undefined;
  }

  /** A kept image of a record the caller holds (no read of the record again); undefined when it is no longer kept. */
  readKept(img: StoredImage): Promise<InputImage | undefined> {
    return this.#read(img);
  }

  async remove(key: string): Promise<void> {
    const record = await this.records.get(key);
    if (!record) return;
    await Promise.all([...record.inputs, ...record.outputs].map((img) => this.#images.delete(img.file)));
    if (record.runnerJobId) await this.#outputsOfJob.delete(record.runnerJobId);
    await this.records.delete(key);
  }

  /**
   * Takes the records whose process is gone (at start: the last one; with Redis also a replica whose lease lapsed),
   * each for one process only: the pending or running ones, which the caller shows ended (`markEnded`), and the ended
   * ones whose end is still to be recorded (`endToRecord`), whose end the caller records, then marks (`markEndRecorded`).
   * Any other held record is released. A record ended by an older version is not held: nothing is left to do of it.
   */
  async claimInterrupted(): Promise<JobRecord[]> {
    const found: JobRecord[] = [];
    for (const { key, value } of await this.records.claimOrphans()) {
      if (isRunning(value) || endToRecord(value)) found.push(value);
      // Released as it is now, not written back from the copy claimed: a record forgotten meanwhile stays deleted.
      else await this.records.update(key, (current) => current, { hold: false });
    }
    return found.sort((a, b) => a.createdAt - b.createdAt);
  }

  /**
   * Shows a leftover record by one path at a time in this process — its sweep (which shows the records it claimed one
   * after another) or a Cancel on it — so that a result is never posted, nor its end recorded, twice: `show` gets the
   * record as kept once its key is taken (the caller's copy, when it cannot be read), as the other path may have shown
   * and marked it since that copy was read, and its answer is returned; undefined, `show` not called, while another
   * path here shows it.
   */
  async showAlone<R>(copy: JobRecord, show: (current: JobRecord | undefined) => Promise<R>): Promise<R | undefined> {
    if (this.#showing.has(copy.key)) return undefined;
    this.#showing.add(copy.key);
    try {
      return await show(await this.records.get(copy.key).catch(() => copy));
    } finally {
      this.#showing.delete(copy.key);
    }
  }

  /**
   * A member's forget of this record, written after the forget's scan (its job accepted as its member forgot): what
   * `forget` does to each record it finds (`forgetJobRecord`, the one rule) — a running job's keeps no prompt.
   */
  forget(key: string): Promise<void> {
    return forgetJobRecord({ records: this.records, images: this.#images, outputsOfJob: this.#outputsOfJob }, key);
  }

  /** Whether this process holds the record (its job runs here, or it claimed it and has not released it). */
  heldHere(key: string): Promise<boolean> {
    return this.records.heldHere(key);
  }

  /** Whether the job runs in another live process (a replica), not this one. */
  runsElsewhere(key: string): Promise<boolean> {
    return this.records.heldElsewhere(key);
  }

  /**
   * Keeps copies of images, those `imagesToKeep` chooses: one over the bound is left out (its buttons say the job is
   * too old), and a job's inputs go together — a write that fails leaves its image out as well, by the same rule.
   */
  async #keep(key: string, prefix: 'in' | 'out', images: readonly InputImage[]): Promise<StoredImage[]> {
    const { kept: chosen, tooLarge } = imagesToKeep(prefix, images);
    for (const i of tooLarge) this.#logger.warn({ jobKey: key, bytes: images[i]!.data.length, max: MAX_KEPT_IMAGE_BYTES }, 'an image is too large to keep for its buttons');
    const kept: StoredImage[] = [];
    for (const { image: img, index: i } of chosen) {
      const file = `${key}-${prefix}-${i}`;
      try {
        await this.#images.put(file, img.data);
        kept.push({ file, filename: img.filename, bytes: img.data.length, index: i });
      } catch (error) {
        this.#logger.warn({ err: loggableError(error), jobKey: key }, 'could not keep an image for its buttons');
      }
    }
    // A job's inputs go together: one whose write failed leaves them all out (an output's stands alone).
    if (prefix === 'in' && kept.length < chosen.length) {
      await Promise.all(kept.map((img) => this.#images.delete(img.file)));
      return [];
    }
    return kept;
  }

  /** The kept output `index` of a job (by its record's key, or its runner job's id through the console's link), as its record lists it. */
  async #keptOutputOfJob(job: { key: string } | { runnerJobId: string }, index: number): Promise<StoredImage | undefined> {
    const key = 'key' in job ? job.key : (await this.#outputsOfJob.get(job.runnerJobId))?.key;
    const record = key === undefined ? undefined : await this.records.get(key);
    return record && keptOutput(record, index);
  }

  async #read(img: StoredImage): Promise<InputImage | undefined> {
    const kept = await this.#images.get(img.file);
    const legacy = kept && isLegacyImage(kept) ? safeJson<{ data?: unknown; filename?: unknown }>(kept.toString('utf8')) : undefined;
    if (legacy) return typeof legacy.data === 'string' ? { data: Buffer.from(legacy.data, 'base64'), filename: img.filename ?? (typeof legacy.filename === 'string' ? legacy.filename : undefined) } : undefined;
    return kept ? { data: kept, filename: img.filename } : undefined;
  }
}

/** Version 0.1 kept an image in Redis as JSON, `{"data":"<base64>",…}`; an image's own bytes never start so. */
function isLegacyImage(kept: Buffer): boolean {
  return kept.subarray(0, 9).toString('latin1') === '{"data":"';
}
