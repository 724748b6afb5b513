import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_EXTENSIONS, PictorError, sniffImageType, writeFileAtomically, type LoggerLike, type OutputFormat } from '../../src/index.js';
import type { InputImage, JobOptions, Requester } from '../runner/types.js';
import type { AttachmentSource } from './download-images.js';
import type { DiscordJobStore, JobRecordPatch, NewJobRecord } from './job-store.js';
import { loggableError } from './loggable-error.js';

export type JobRecordStatus = 'draft' | 'pending' | 'running' | 'completed' | 'failed' | 'cancelled' | 'refused';

/** An image saved in the record's folder. */
export interface StoredImage {
  /** File name inside the record's folder. */
  file: string;
  /** The name it came with, if any. */
  filename?: string | undefined;
  /** Its size on disk (for the store's byte bound). */
  bytes?: number | undefined;
}

/**
 * What a button needs to act on a job after a restart: the job spec (prompt,
 * options, requester) and its images on disk. While the job is pending or
 * running it also keeps how to edit its reply (the interaction token, good for
 * 15 minutes), so a restart after a crash can say the job was interrupted; it
 * is dropped as soon as the job ends.
 */
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
  outputs: StoredImage[];
  /** A draft of the "Edit image" menu: the attachments to fetch if they were not fetched before a restart. */
  sources?: AttachmentSource[] | undefined;
  /** Pending or running jobs only: the reply to edit if the process dies before the job ends. */
  reply?: ReplyHandle | undefined;
  /** The language of the job's public messages (`JobHeader.locale`); English for records made before it was kept. */
  locale?: string | undefined;
}

/** An interaction's reply, as a later process can edit it (until the token expires, 15 minutes after `issuedAt`). */
export interface ReplyHandle {
  applicationId: string;
  token: string;
  issuedAt: number;
}

const ENDED: readonly JobRecordStatus[] = ['completed', 'failed', 'cancelled', 'refused'];

export interface JobRecordStoreOptions {
  /** The bot's data folder; records live in `<dataDir>/discord/`. */
  dataDir: string;
  /** Records kept: beyond it the oldest finished ones are dropped with their images. Default 500. */
  maxRecords?: number | undefined;
  /** Bytes of saved images kept: beyond it the oldest finished records are dropped. Default 1 GiB. */
  maxBytes?: number | undefined;
  /** Drafts (a menu opened, a modal never sent) older than this are dropped. Default 1 hour. */
  draftTtlMs?: number | undefined;
  logger: LoggerLike;
}

interface StoreFile {
  version: 1;
  records: JobRecord[];
}

const DEFAULT_MAX_RECORDS = 500;
const DEFAULT_MAX_BYTES = 1024 ** 3;
/** The folder and files hold other people's prompts and images: only the bot's user may read them. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** The store file could not be read, and there was no good backup copy: the bot must not start as if all were well. */
export class JobStoreUnreadableError extends PictorError<'job_store_unreadable'> {
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    super(
      'job_store_unreadable',
      `the Discord job store ${file} is unreadable (${cause instanceof Error ? cause.message : String(cause)}) and has no usable backup (${file}.bak); ` +
        'move it aside (or delete it) to start with an empty store — buttons of older jobs will then say they are too old',
      { cause },
    );
  }
}
const DEFAULT_DRAFT_TTL_MS = 60 * 60_000;

/**
 * A small JSON store of job records keyed by a short id, with the jobs' input
 * and output images saved beside it. Writes are atomic (temp file + rename)
 * and serialised, and the previous file is kept as `jobs.json.bak`. The store
 * is bounded by `maxRecords` and `maxBytes`; only finished records are
 * dropped for it (oldest first), never a pending or running job's. The folder
 * is 0700 and every file 0600.
 */
export class JobRecordStore implements DiscordJobStore {
  readonly #root: string;
  readonly #file: string;
  readonly #maxRecords: number;
  readonly #maxBytes: number;
  readonly #draftTtlMs: number;
  readonly #logger: LoggerLike;
  readonly #records = new Map<string, JobRecord>();
  #dirty = false;
  #flushing: Promise<void> | undefined;
  /** Keys of the records left pending or running by the last process (read at open), until claimed. */
  #leftRunning: string[] = [];

  private constructor(options: JobRecordStoreOptions) {
    this.#root = join(options.dataDir, 'discord');
    this.#file = join(this.#root, 'jobs.json');
    this.#maxRecords = Math.max(1, options.maxRecords ?? DEFAULT_MAX_RECORDS);
    this.#maxBytes = Math.max(0, options.maxBytes ?? DEFAULT_MAX_BYTES);
    this.#draftTtlMs = options.draftTtlMs ?? DEFAULT_DRAFT_TTL_MS;
    this.#logger = options.logger;
  }

  static async open(options: JobRecordStoreOptions): Promise<JobRecordStore> {
    const store = new JobRecordStore(options);
    await mkdir(options.dataDir, { recursive: true, mode: DIR_MODE });
    await mkdir(join(store.#root, 'images'), { recursive: true, mode: DIR_MODE });
    // Folders made by an older version were world-readable.
    await chmod(store.#root, DIR_MODE);
    await chmod(join(store.#root, 'images'), DIR_MODE);
    await store.#load();
    return store;
  }

  /** A new key (11 URL-safe characters). */
  newKey(): string {
    let key: string;
    do key = randomBytes(8).toString('base64url');
    while (this.#records.has(key));
    return key;
  }

  async get(key: string): Promise<JobRecord | undefined> {
    return this.peek(key);
  }

  /** The record now, from memory (this store keeps them all there). */
  peek(key: string): JobRecord | undefined {
    const record = this.#records.get(key);
    return record ? structuredClone(record) : undefined;
  }

  get size(): number {
    return this.#records.size;
  }

  /**
   * Adds a record (visible to `get` at once) and saves its input images.
   * Resolves once both are on disk.
   */
  async add(init: NewJobRecord, inputs: readonly InputImage[] = []): Promise<JobRecord> {
    const record: JobRecord = { ...structuredClone(init), createdAt: init.createdAt ?? Date.now(), inputs: [], outputs: [] };
    this.#records.set(record.key, record);
    const dropped = this.#prune(inputs.reduce((sum, img) => sum + img.data.length, 0));
    if (inputs.length) record.inputs = await this.#saveImages(record.key, 'in', inputs);
    await Promise.all(dropped.map((key) => this.#removeImages(key)));
    await this.#persist();
    return structuredClone(record);
  }

  /** Changes a record's fields; a record that was dropped meanwhile is ignored. */
  async update(key: string, patch: JobRecordPatch): Promise<void> {
    const record = this.#records.get(key);
    if (!record) return;
    Object.assign(record, structuredClone(patch));
    // An ended job's reply token is of no more use: it is not kept.
    if (ENDED.includes(record.status)) delete record.reply;
    await this.#persist();
  }

  /** The member's drafts of the "Edit image" menu (links only), oldest first. */
  async drafts(userId: string): Promise<JobRecord[]> {
    return [...this.#records.values()].filter((r) => r.status === 'draft' && r.requester.userId === userId).map((r) => structuredClone(r));
  }

  /** Records of jobs that were pending or running (at start: those a dead process left behind), oldest first. */
  unfinished(): JobRecord[] {
    return [...this.#records.values()].filter((r) => r.status === 'pending' || r.status === 'running').map((r) => structuredClone(r));
  }

  /** One process per data folder: no job runs elsewhere. */
  async runsElsewhere(): Promise<boolean> {
    return false;
  }

  /** One process per data folder: what the last one left pending or running, once (the first call after open). */
  async claimInterrupted(): Promise<JobRecord[]> {
    const keys = this.#leftRunning;
    this.#leftRunning = [];
    return keys.map((key) => this.peek(key)).filter((r): r is JobRecord => r !== undefined && (r.status === 'pending' || r.status === 'running'));
  }

  /** Saves the input images of a record (a draft whose downloads finished). */
  async setInputs(key: string, images: readonly InputImage[]): Promise<void> {
    if (!this.#records.has(key)) return;
    const inputs = await this.#saveImages(key, 'in', images);
    const record = this.#records.get(key);
    if (!record) return;
    record.inputs = inputs;
    await this.#persist();
  }

  /** Saves a finished job's images, for its Edit buttons. */
  async saveOutputs(key: string, images: readonly Buffer[], format: OutputFormat): Promise<void> {
    if (!this.#records.has(key)) return;
    const outputs = await this.#saveImages(
      key,
      'out',
      images.map((data, i) => ({ data, filename: `image-${i + 1}.${FILE_EXTENSIONS[format]}` })),
    );
    const record = this.#records.get(key);
    if (!record) return;
    record.outputs = outputs;
    await this.#persist();
  }

  async readInputs(key: string): Promise<InputImage[]> {
    const record = this.#records.get(key);
    if (!record) return [];
    try {
      return await Promise.all(record.inputs.map(async (img) => ({ data: await readFile(join(this.#dir(key), img.file)), filename: img.filename })));
    } catch {
      return [];
    }
  }

  async readOutput(key: string, index: number): Promise<InputImage | undefined> {
    const img = this.#records.get(key)?.outputs[index];
    if (!img) return undefined;
    return { data: await readFile(join(this.#dir(key), img.file)), filename: img.filename };
  }

  /** Copies another record's inputs into this one (a reroll or retry gets its own copy). */
  async copyInputs(fromKey: string, toKey: string): Promise<void> {
    const from = this.#records.get(fromKey);
    const to = this.#records.get(toKey);
    if (!from || !to) return;
    await mkdir(this.#dir(toKey), { recursive: true, mode: DIR_MODE });
    await Promise.all(from.inputs.map((img) => copyFile(join(this.#dir(fromKey), img.file), join(this.#dir(toKey), img.file))));
    to.inputs = structuredClone(from.inputs);
    await this.#persist();
  }

  async remove(key: string): Promise<void> {
    if (!this.#records.delete(key)) return;
    await this.#removeImages(key);
    await this.#persist();
  }

  /** Waits for pending writes. */
  async close(): Promise<void> {
    await this.#flushing;
  }

  #dir(key: string): string {
    return join(this.#root, 'images', key);
  }

  async #saveImages(key: string, prefix: 'in' | 'out', images: readonly InputImage[]): Promise<StoredImage[]> {
    await mkdir(this.#dir(key), { recursive: true, mode: DIR_MODE });
    return Promise.all(
      images.map(async (img, i) => {
        const type = sniffImageType(img.data);
        const file = `${prefix}-${i}.${type ? FILE_EXTENSIONS[type] : 'bin'}`;
        await writeFile(join(this.#dir(key), file), img.data, { mode: FILE_MODE });
        return { file, filename: img.filename, bytes: img.data.length };
      }),
    );
  }

  async #removeImages(key: string): Promise<void> {
    await rm(this.#dir(key), { recursive: true, force: true }).catch((err: unknown) => this.#logger.warn({ err: loggableError(err), key }, 'could not remove a job record’s images'));
  }

  /**
   * Drops stale drafts, then the oldest finished records while the store is
   * over its count or byte bound; returns their keys. Pending and running
   * records are never dropped (their buttons must keep working).
   */
  #prune(incomingBytes = 0): string[] {
    const dropped: string[] = [];
    const now = Date.now();
    for (const [key, record] of this.#records) {
      if (record.status === 'draft' && now - record.createdAt > this.#draftTtlMs) {
        this.#records.delete(key);
        dropped.push(key);
      }
    }
    let bytes = incomingBytes;
    for (const record of this.#records.values()) bytes += bytesOf(record);
    for (const [key, record] of this.#records) {
      if (this.#records.size <= this.#maxRecords && bytes <= this.#maxBytes) break;
      if (!ENDED.includes(record.status)) continue;
      this.#records.delete(key);
      bytes -= bytesOf(record);
      dropped.push(key);
    }
    return dropped;
  }

  /**
   * Reads the store at start. A file that cannot be read is moved aside and
   * the backup copy (the previous write) restored, saying so; with no good
   * backup either, the bot refuses to start (JobStoreUnreadableError).
   */
  async #load(): Promise<void> {
    let records: JobRecord[] | undefined;
    try {
      records = await readStoreFile(this.#file);
    } catch (error) {
      const backup = await readStoreFile(`${this.#file}.bak`).catch(() => undefined);
      if (!backup) throw new JobStoreUnreadableError(this.#file, error);
      const aside = `${this.#file}.unreadable-${Date.now()}`;
      await rename(this.#file, aside);
      this.#logger.warn({ err: loggableError(error), movedTo: aside, restoredFrom: `${this.#file}.bak` }, 'the Discord job store was unreadable; restored its backup copy (the last write before it is lost)');
      records = backup;
      this.#dirty = true;
    }
    if (records === undefined) {
      // No store file: a first start, or a crash between the two renames of a write (the backup is the latest copy).
      records = await readStoreFile(`${this.#file}.bak`).catch(() => undefined);
    }
    for (const record of (records ?? []).sort((a, b) => a.createdAt - b.createdAt)) this.#records.set(record.key, record);
    this.#leftRunning = this.unfinished().map((r) => r.key);
    await chmod(this.#file, FILE_MODE).catch(() => undefined);
    if (this.#dirty) await this.#persist();
  }

  /** Writes the store (coalesced: one write in flight, one more if something changed meanwhile). Never rejects. */
  #persist(): Promise<void> {
    this.#dirty = true;
    this.#flushing ??= this.#flushLoop();
    return this.#flushing;
  }

  async #flushLoop(): Promise<void> {
    while (this.#dirty) {
      this.#dirty = false;
      const body: StoreFile = { version: 1, records: [...this.#records.values()] };
      try {
        // The previous version stays as the backup a damaged file is restored from; the file itself is never missing.
        await writeFileAtomically(this.#file, JSON.stringify(body), { backupPath: `${this.#file}.bak`, mode: FILE_MODE });
      } catch (error) {
        this.#logger.error({ err: loggableError(error) }, 'could not save the Discord job store; buttons of recent jobs may not work after a restart');
      }
    }
    // Cleared in the same turn as the last check of #dirty, so no change can slip between them.
    this.#flushing = undefined;
  }
}

const bytesOf = (record: JobRecord): number => [...record.inputs, ...record.outputs].reduce((sum, img) => sum + (img.bytes ?? 0), 0);

/** The records of a store file; undefined when there is no file; throws when it is not a store file. */
async function readStoreFile(file: string): Promise<JobRecord[] | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const parsed = JSON.parse(text) as Partial<StoreFile> | null;
  if (!parsed || parsed.version !== 1 || !Array.isArray(parsed.records)) throw new Error('not a job store (version 1 with records)');
  for (const record of parsed.records) {
    if (!record || typeof record.key !== 'string' || typeof record.createdAt !== 'number' || !Array.isArray(record.inputs) || !Array.isArray(record.outputs)) {
      throw new Error('a record is incomplete');
    }
  }
  return parsed.records;
}
