import { randomBytes } from 'node:crypto';
import { FILE_EXTENSIONS, type LoggerLike, type OutputFormat } from 'pictor';
import { safeJson } from 'pictor/internal';
import { formatsOf, type InputImage, type JobCost, type JobOptions, type JobUpdate, type Requester } from '../runner/types.js';
import type { Words } from '../runner/words.js';
import type { JobEnd } from '../runner/job-history.js';
import { OwedWrites } from '../runner/owed-writes.js';
import { forgetJobRecord } from '../state/forget-member.js';
import { endToRecord, imagesToKeep, isDone, isRunning, keepsNoEnd, MAX_KEPT_IMAGE_BYTES, releaseWhenDone, withDraft, type BotState, type Space, type StatusWords } from '../state/index.js';
import type { AttachmentSource } from './download-images.js';
import { keptOutput, outputIndex } from './job-rules.js';
import { loggableError } from './loggable-error.js';

/** A job record's status: each word names its phase in the one release rule (`bots/state/job-records.ts`). */
export type JobRecordStatus = StatusWords<'draft' | 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'refused'>;

/** A kept image: its key in the images space. */
export interface StoredImage {
  file: string;
  /** The name it came with, if any. */
  filename?: string | undefined;
  bytes?: number | undefined;
  /** Which of the images given it is (0-based): one left out leaves a gap. Older records lack it (read by position). */
  index?: number | undefined;
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
  /** The reply to edit if the process dies before the job is done (dropped once it is). */
  reply?: ReplyHandle | undefined;
  /** The language of the job's public messages (`JobHeader.locale`); English for records made before it was kept. */
  locale?: string | undefined;
  /** Shown only to its requester (ephemeral): its Reroll, Retry and Edit are private too, and so is its end after a restart. */
  private?: boolean | undefined;
  /** A finished job's facts, saved with its images before its result is shown: a sweep shows that result, not "interrupted". */
  result?: KeptResult | undefined;
  /** The runner recorded the job's end (history, audit channel): a sweep does not record it again. */
  endRecorded?: true | undefined;
  /** The end the runner is to record, saved with the ended status until `endRecorded`: held meanwhile, so a sweep records it. */
  end?: JobEnd | undefined;
  /**
   * The job's final update on a record its view could not mark ended: how it ended when its message reached Discord
   * (`shown`: the sweep marks it silently), else what the message shows, for the sweep to show rather than
   * "interrupted". A failure or cancellation with images is saved here with them (`saveOutputs`). Dropped with `end`.
   */
  final?: FinalKept | undefined;
  /** When a sweep or Cancel last failed to post "stopped" for a job that made nothing: past the images' life it is marked silently. */
  sweptAt?: number | undefined;
  /**
   * The press of its member's Retry that took the job over (`takeRetry`), when, and whether the job it sent again
   * started (`retryStarted`): the job runs again once, however often its member presses it (another member's Retry is
   * their own new job and takes nothing). A take whose job did not start lapses (`JobRecordStore.RETRY_START_MS`).
   */
  retriedBy?: { press: string; at: number; started?: true | undefined } | undefined;
  /**
   * What the job's end shows, kept with its ended mark when that end reached no message (its reply's edit refused, and
   * the channel too, such as 50013 Missing Permissions: the reply keeps its progress and Cancel). A press of that Cancel
   * by its member (or an admin) shows this end privately, with the images still kept (`show-kept-end.ts`).
   */
  unshown?: FinalShown | undefined;
}

/** What a job's final message shows besides its images, for a sweep to show again; `cost`: the ledger's charge (none when released). */
export type FinalShown =
  | { type: 'completed' }
  | { type: 'failed'; code: string; words: Words; retryable: boolean; cost?: JobCost | undefined }
  | { type: 'cancelled'; byUserId: string; reason?: 'requested' | 'shutdown' | undefined; cost?: JobCost | undefined };

/** `JobRecord.final`: what to show, or `shown` (with what it showed when kept: a Cancel on its message shows it again). */
export type FinalKept = FinalShown | (FinalShown & { shown: true }) | { type: FinalShown['type']; shown: true };

/** What a finished job's result shows besides its images (older records: `format`, read by `formatsOf`). */
export type KeptResult = Omit<Extract<JobUpdate, { type: 'completed' }>, 'type' | 'jobId' | 'images' | 'usage' | 'formats'> & { formats?: OutputFormat[] | undefined; format?: OutputFormat | undefined } & {
  /** The interaction's limit for one upload (bytes), which the images were fitted to. */
  attachmentSizeLimit: number;
};

/** An interaction's reply, as a later process can edit it (until the token expires, 15 minutes after `issuedAt`). */
export interface ReplyHandle {
  applicationId: string;
  token: string;
  issuedAt: number;
  /** Where the job was asked: its server's id, `null` in a DM (`linkPlaceOf`); unknown on older records. */
  guildId?: string | null | undefined;
}

type NewJobRecord = Omit<JobRecord, 'inputs' | 'outputs' | 'createdAt' | 'endRecorded' | 'final'> & { createdAt?: number };
/** A change of a record's fields (`endRecorded` and `final` are set by `markEndRecorded` alone). */
type JobRecordPatch = Partial<Pick<JobRecord, 'status' | 'runnerJobId' | 'prompt' | 'sources' | 'end' | 'sweptAt' | 'final' | 'made' | 'unshown'>>;

/** What a write leaves of a record, decided on the record as changed: no end or final once recorded, no reply once done. */
function settled(record: JobRecord): JobRecord {
  if (keepsNoEnd(record)) {
    delete record.end;
    delete record.final;
  }
  // Kept until the end is recorded, not only shown: the recorded end carries the link to its message.
  if (isDone(record)) delete record.reply;
  return record;
}

/** `markEnded`'s tries, and the pause after a failed one (times the tries so far). */
const MARK_ATTEMPTS = 3;
const MARK_RETRY_MS = 200;

/**
 * The Discord jobs in the bots' state (with Redis a button works on any replica), held by their process while the
 * release rule says (`job-records.ts`), then claimed by one survivor (`claimInterrupted`). Images are bounded copies:
 * a job whose images are gone says it is too old.
 */
export class JobRecordStore {
  readonly records: Space<JobRecord>;
  readonly #images: Space<Buffer>;
  readonly #drafts: Space<{ key: string; createdAt: number }[]>;
  /** Runner job id → the record that kept its images (the console's thumbnails). */
  readonly #outputsOfJob: Space<{ key: string }>;
  readonly #logger: LoggerLike;
  /** Records being added: `get` waits for the add (a modal's submit may come before the write ends), and reads the record with its kept images. */
  readonly #adding = new Map<string, Promise<unknown>>();
  /** Leftover records this process is showing (its sweep's, or a Cancel's on a job no runner knows): `showAlone`. */
  readonly #showing = new Set<string>();
  /** Ends whose every try failed (`markEnded`), by their record's key: written again until written; a stop pays them (`payWithin`). */
  readonly owed: OwedWrites;

  constructor(options: { state: BotState; logger: LoggerLike }) {
    const { store, spaces } = options.state;
    this.records = store.space(spaces.discordJobs);
    this.#images = store.space(spaces.discordImages);
    this.#drafts = store.space(spaces.discordDrafts);
    this.#outputsOfJob = store.space(spaces.discordJobOutputs);
    this.#logger = options.logger;
    this.owed = new OwedWrites(options.logger, () => store.closing);
  }

  /** A new key (11 URL-safe characters). */
  newKey(): string {
    return randomBytes(8).toString('base64url');
  }

  async get(key: string): Promise<JobRecord | undefined> {
    await this.#adding.get(key);
    return this.records.get(key);
  }

  /** Adds a record and keeps its input images; while pending or running, this process holds it. */
  async add(init: NewJobRecord, inputs: readonly InputImage[] = []): Promise<JobRecord> {
    const record: JobRecord = { ...structuredClone(init), createdAt: init.createdAt ?? Date.now(), inputs: [], outputs: [] };
    const adding = (async () => {
      if (inputs.length) record.inputs = await this.#keep(record.key, 'in', inputs);
      await this.records.put(record.key, record, { hold: isRunning(record) });
    })();
    this.#adding.set(record.key, adding.catch(() => undefined));
    try {
      await adding;
    } finally {
      this.#adding.delete(record.key);
    }
    if (record.status === 'draft') {
      const draft = { key: record.key, createdAt: record.createdAt };
      await this.#drafts.update(record.requester.userId, (own) => withDraft(own, draft));
    }
    return record;
  }

  /** Changes a record's fields (one dropped meanwhile is ignored), released in the same write once done (`releaseWhenDone`). */
  async update(key: string, patch: JobRecordPatch): Promise<void> {
    await this.records.update(key, (record) => record && settled(Object.assign(record, structuredClone(patch))), { hold: releaseWhenDone });
  }

  /**
   * A job's end, once shown (with the `end` to record, held until `markEndRecorded`; what it shows, `unshown`, when no
   * message took it): tried a few times, then thrown — and owed: kept in this process and written again, with longer
   * pauses, until the state takes it (a full Redis, a full disk), a stop waiting for it within its grace (`owed.payWithin`). A
   * record left running while it is owed stays held by this process; only a stop or a crash before it is written leaves
   * it to a sweep, which says the job stopped.
   */
  async markEnded(key: string, status: 'completed' | 'failed' | 'cancelled', also: Pick<JobRecordPatch, 'end' | 'made' | 'unshown'> = {}): Promise<void> {
    const write = () => this.update(key, { ...also, status });
    await this.owed.writeOrOwe(key, write, () => this.#tried(write, { jobKey: key, status }, 'could not mark a job ended; trying again'));
  }

  /** A mark's write (`markEnded`, `retryStarted`, `giveBackRetry`), tried `MARK_ATTEMPTS` times, each failure but the last logged: the last thrown. */
  async #tried<R>(write: () => Promise<R>, about: Record<string, unknown>, message: string): Promise<R> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (attempt >= MARK_ATTEMPTS) throw error;
        this.#logger.warn({ err: loggableError(error), ...about, attempt }, message);
        await new Promise((resolve) => setTimeout(resolve, MARK_RETRY_MS * attempt));
      }
    }
  }

  /**
   * Saves that the runner recorded the job's end, with its `final`, in one write: a record marked ended is released;
   * one still running (its view could not mark it) stays held with `final` for the sweep. Decided on the record as
   * changed, so one marked ended by a write whose answer was lost is released too.
   */
  async markEndRecorded(key: string, final?: FinalKept): Promise<void> {
    await this.records.update(key, (record) => record && settled({ ...record, endRecorded: true, ...(final && { final: structuredClone(final) }) }), { hold: releaseWhenDone });
  }

  /**
   * How long a Retry taken by a press whose job has not started yet (`takeRetry`) holds the job: a live process starts
   * it within seconds (Discord's 3 s to the first answer, then a record write and an edit's kept images read from the
   * bots' state) and gives it back at once when it does not; a process killed in between cannot, so its take lapses
   * after this — a minute, well past a start and far short of the press's 15-minute token, so its member's next press
   * (after the restart, or on another replica) runs the job instead of being told it already ran.
   */
  static readonly RETRY_START_MS = 60_000;

  /**
   * Takes the job over for one press of its member's Retry (`pressId`), in one compare-and-set on either state backend,
   * asked before anything is admitted or charged: `taken` for the press that took it; `starting` while another press's
   * take is starting its job (not started yet, taken less than `RETRY_START_MS` ago); `retried` once a press's job
   * started (or the record is gone). A take older than that whose job never started (its process died) is free again.
   * Its age is judged here, as the write is tried, by this process's clock (replicas' clocks agree within the lapse).
   */
  async takeRetry(key: string, pressId: string): Promise<'taken' | 'starting' | 'retried'> {
    const held = (take: JobRecord['retriedBy'], now: number) => take !== undefined && (take.started === true || now - take.at < JobRecordStore.RETRY_START_MS);
    const { after } = await this.records.update(key, (record) => {
      const now = Date.now();
      return record && (held(record.retriedBy, now) ? record : { ...record, retriedBy: { press: pressId, at: now } });
    });
    const take = after?.retriedBy;
    if (take === undefined || take.started) return 'retried';
    return take.press === pressId ? 'taken' : 'starting';
  }

  /**
   * Marks the Retry `pressId` took as started, just before its job is handed to the runner: it is spent, and never
   * lapses. Tried as `markEnded` is, then thrown. Answers `marked` when the take is still this press's, now marked;
   * `held` when another press holds it or it is spent; `free` when nobody holds it (this press's take lapsed, and a
   * press that took it since gave it back) or the record is gone — nothing ran, so its member may press again.
   */
  async retryStarted(key: string, pressId: string): Promise<'marked' | 'held' | 'free'> {
    const mark = () => this.records.update(key, (record) => {
      const take = record?.retriedBy;
      return record && take?.press === pressId ? { ...record, retriedBy: { ...take, started: true } } : record;
    });
    const { after } = await this.#tried(mark, { jobKey: key }, 'could not mark a Retry’s job started; trying again');
    const take = after?.retriedBy;
    if (take === undefined) return 'free';
    return take.press === pressId ? 'marked' : 'held';
  }

  /**
   * Gives back a Retry that `pressId` took and whose job was not handed to the runner (refused, not started, marked or
   * not): tried as its mark is, then thrown — a marked take never lapses, so only this write frees it.
   */
  async giveBackRetry(key: string, pressId: string): Promise<void> {
    const giveBack = () => this.records.update(key, (record) => {
      const take = record?.retriedBy;
      if (!record || take?.press !== pressId) return record;
      const { retriedBy: _taken, ...rest } = record;
      return rest;
    });
    await this.#tried(giveBack, { jobKey: key }, 'could not give back a Retry whose job did not run; trying again');
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
   * Keeps a finished job's images for its Edit buttons, each named for its format (`formatsOf`), and in the same write
   * what its result (`result`) or the failure or cancellation they came with (`final`) shows, for a sweep.
   */
  async saveOutputs(key: string, images: readonly Buffer[], formats: readonly OutputFormat[], also: { result?: KeptResult; final?: FinalShown } = {}): Promise<void> {
    const named = formatsOf({ formats }, images.length).map((format, i) => ({ data: images[i]!, filename: `image-${i + 1}.${FILE_EXTENSIONS[format]}` }));
    const outputs = await this.#keep(key, 'out', named);
    const { result, final } = also;
    const { after } = await this.records.update(key, (record) => record && { ...record, outputs, made: images.length, ...(result && { result: structuredClone(result) }), ...(final && { final: structuredClone(final) }) });
    if (after?.runnerJobId && outputs.length > 0) await this.#outputsOfJob.put(after.runnerJobId, { key });
  }

  /**
   * Which of a runner job's images are still kept (the console's thumbnails): their indices in the job's numbering,
   * ascending, each asked with `has` (the images' bound drops them without touching the records); undefined when none.
   * Given `atMost`, the first `atMost`, asked that many at a time.
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

  /** Whether a runner job's image `index` is still kept: one `has`. */
  async hasKeptOutput(runnerJobId: string, index: number): Promise<boolean> {
    const img = await this.#keptOutputOfJob({ runnerJobId }, index);
    return img ? this.#images.has(img.file) : false;
  }

  /** A runner job's image `index`, if it was kept and still is. */
  async readKeptOutput(runnerJobId: string, index: number): Promise<InputImage | undefined> {
    return this.readKept(await this.#keptOutputOfJob({ runnerJobId }, index));
  }

  /** Whether a record's input images (some) are all still kept, no bytes read: a button refuses before it answers. */
  async inputsKept(record: Pick<JobRecord, 'inputs'>): Promise<boolean> {
    if (record.inputs.length === 0) return false;
    const there = await Promise.all(record.inputs.map((img) => this.#images.has(img.file)));
    return there.every(Boolean);
  }

  /** The record's input images; empty when any of them is no longer kept (a job's inputs go together). */
  async readInputs(key: string): Promise<InputImage[]> {
    const record = await this.records.get(key);
    const images = await Promise.all((record?.inputs ?? []).map((img) => this.readKept(img)));
    return images.every((img): img is InputImage => img !== undefined) ? images : [];
  }

  /** The job's output image `index`, if it was kept and still is. */
  async readOutput(key: string, index: number): Promise<InputImage | undefined> {
    return this.readKept(await this.#keptOutputOfJob({ key }, index));
  }

  async remove(key: string): Promise<void> {
    const record = await this.records.get(key);
    if (!record) return;
    await Promise.all([...record.inputs, ...record.outputs].map((img) => this.#images.delete(img.file)));
    if (record.runnerJobId) await this.#outputsOfJob.delete(record.runnerJobId);
    await this.records.delete(key);
  }

  /**
   * Takes the records whose process is gone, each for one process: the running ones (the caller shows them ended) and
   * the ended ones whose end is still to be recorded (the caller records it). Any other is released.
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
   * Shows a leftover record by one path at a time here (its sweep or a Cancel), so a result is never posted twice:
   * `show` gets the record as kept now (the copy when it cannot be read); undefined, not called, while another shows it.
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

  /** A member's forget of a record written after the forget's scan: `forgetJobRecord`, the one rule. */
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

  /** Keeps copies of the images `imagesToKeep` chooses; a failed write leaves its image out by the same rule. */
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

  /** The kept output `index` of a job, by its record's key or its runner job's id. */
  async #keptOutputOfJob(job: { key: string } | { runnerJobId: string }, index: number): Promise<StoredImage | undefined> {
    const key = 'key' in job ? job.key : (await this.#outputsOfJob.get(job.runnerJobId))?.key;
    const record = key === undefined ? undefined : await this.records.get(key);
    return record && keptOutput(record, index);
  }

  /** A kept image (of a record the caller holds: no read of the record again); undefined when it is no longer kept. */
  async readKept(img: StoredImage | undefined): Promise<InputImage | undefined> {
    if (!img) return undefined;
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
