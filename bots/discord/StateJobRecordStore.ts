import { randomBytes } from 'node:crypto';
import { FILE_EXTENSIONS, type LoggerLike, type OutputFormat } from '../../src/index.js';
import type { InputImage } from '../runner/types.js';
import type { Space, SpaceDefinition, StateStore } from '../state/index.js';
import type { DiscordJobStore, JobRecordPatch, NewJobRecord } from './job-store.js';
import type { JobRecord, JobRecordStatus, StoredImage } from './JobRecordStore.js';
import { loggableError } from './loggable-error.js';

const ENDED: readonly JobRecordStatus[] = ['completed', 'failed', 'cancelled', 'refused'];
const HOURS = 3600_000;

/** Job records: the spec, the reply, the images' names; 7 days after their last change. */
export const DISCORD_JOBS: SpaceDefinition = { name: 'discord-jobs', dir: 'discord/jobs', ttlMs: 7 * 24 * HOURS, maxValueBytes: 64 * 1024 };
/**
 * A size-capped copy of a job's images (for Reroll, Retry and Edit), kept 24
 * hours: an image over 8 MiB is not kept (its buttons then say the job is too
 * old). Stored base64 in JSON, so a value is at most about 11 MiB.
 */
export const MAX_KEPT_IMAGE_BYTES = 8 * 1024 * 1024;
export const DISCORD_IMAGES: SpaceDefinition = { name: 'discord-images', dir: 'discord/kept-images', ttlMs: 24 * HOURS, maxValueBytes: Math.ceil((MAX_KEPT_IMAGE_BYTES * 4) / 3) + 4096 };
/** Which record kept the images of a runner job (its ledger job id): the console's thumbnails, as long as the images are kept. */
export const DISCORD_JOB_OUTPUTS: SpaceDefinition = { name: 'discord-job-outputs', dir: 'discord/job-outputs', ttlMs: 24 * HOURS, maxValueBytes: 256 };
/** Each member's open drafts of the "Edit image" menu (keys only), an hour after the last one. */
export const DISCORD_DRAFTS: SpaceDefinition = { name: 'discord-drafts', dir: 'discord/drafts', ttlMs: HOURS, maxValueBytes: 4096 };

interface KeptImage {
  data: string;
  filename?: string | undefined;
}

/**
 * The Discord job records in the bots' state store (Redis: every replica sees
 * every record, so a button works whichever replica gets it). A pending or
 * running record is held by the process running its job; when that process
 * is gone, one survivor claims it (`claimInterrupted`). Images are kept as
 * size-capped copies with a TTL (see DISCORD_IMAGES), never without a bound.
 */
export class StateJobRecordStore implements DiscordJobStore {
  readonly #records: Space<JobRecord>;
  readonly #images: Space<KeptImage>;
  readonly #drafts: Space<{ key: string; createdAt: number }[]>;
  readonly #outputsOfJob: Space<{ key: string }>;
  readonly #logger: LoggerLike;

  constructor(options: { state: StateStore; logger: LoggerLike }) {
    this.#records = options.state.space<JobRecord>(DISCORD_JOBS);
    this.#images = options.state.space<KeptImage>(DISCORD_IMAGES);
    this.#drafts = options.state.space<{ key: string; createdAt: number }[]>(DISCORD_DRAFTS);
    this.#outputsOfJob = options.state.space<{ key: string }>(DISCORD_JOB_OUTPUTS);
    this.#logger = options.logger;
  }

  async open(): Promise<void> {
    await Promise.all([this.#records.open(), this.#images.open(), this.#drafts.open(), this.#outputsOfJob.open()]);
  }

  newKey(): string {
    return randomBytes(8).toString('base64url');
  }

  get(key: string): Promise<JobRecord | undefined> {
    return this.#records.get(key);
  }

  async add(init: NewJobRecord, inputs: readonly InputImage[] = []): Promise<JobRecord> {
    const record: JobRecord = { ...structuredClone(init), createdAt: init.createdAt ?? Date.now(), inputs: [], outputs: [] };
    if (inputs.length) record.inputs = await this.#keep(record.key, 'in', inputs);
    await this.#records.put(record.key, record, { hold: record.status === 'pending' || record.status === 'running' });
    if (record.status === 'draft') {
      const own = (await this.#drafts.get(record.requester.userId)) ?? [];
      await this.#drafts.put(record.requester.userId, [...own.filter((d) => d.key !== record.key), { key: record.key, createdAt: record.createdAt }].slice(-10));
    }
    return record;
  }

  async update(key: string, patch: JobRecordPatch): Promise<void> {
    const record = await this.#records.get(key);
    if (!record) return;
    Object.assign(record, structuredClone(patch));
    const ended = ENDED.includes(record.status);
    // An ended job's reply token is of no more use: it is not kept, and nobody needs to sweep the job.
    if (ended) delete record.reply;
    await this.#records.put(key, record, { hold: ended ? false : undefined });
  }

  async drafts(userId: string): Promise<JobRecord[]> {
    const found: JobRecord[] = [];
    for (const { key } of (await this.#drafts.get(userId)) ?? []) {
      const record = await this.#records.get(key);
      if (record?.status === 'draft' && record.requester.userId === userId) found.push(record);
    }
    return found.sort((a, b) => a.createdAt - b.createdAt);
  }

  async setInputs(key: string, images: readonly InputImage[]): Promise<void> {
    const record = await this.#records.get(key);
    if (!record) return;
    record.inputs = await this.#keep(key, 'in', images);
    await this.#records.put(key, record);
  }

  async saveOutputs(key: string, images: readonly Buffer[], format: OutputFormat): Promise<void> {
    const record = await this.#records.get(key);
    if (!record) return;
    record.outputs = await this.#keep(
      key,
      'out',
      images.map((data, i) => ({ data, filename: `image-${i + 1}.${FILE_EXTENSIONS[format]}` })),
    );
    await this.#records.put(key, record);
    if (record.runnerJobId && record.outputs.length > 0) await this.#outputsOfJob.put(record.runnerJobId, { key });
  }

  /** How many images are kept of a runner job (its id in the ledger), for the console's thumbnails; undefined when none. */
  async keptOutputs(runnerJobId: string): Promise<number | undefined> {
    const link = await this.#outputsOfJob.get(runnerJobId);
    const count = link ? (await this.#records.get(link.key))?.outputs.length : undefined;
    return count ? count : undefined;
  }

  /** One kept image of a runner job. */
  async readKeptOutput(runnerJobId: string, index: number): Promise<InputImage | undefined> {
    const link = await this.#outputsOfJob.get(runnerJobId);
    return link ? this.readOutput(link.key, index) : undefined;
  }

  async readInputs(key: string): Promise<InputImage[]> {
    const record = await this.#records.get(key);
    if (!record) return [];
    const images = await Promise.all(record.inputs.map((img) => this.#read(img)));
    // A job's inputs go together: with one missing, none is of use.
    return images.every((img): img is InputImage => img !== undefined) ? images : [];
  }

  async readOutput(key: string, index: number): Promise<InputImage | undefined> {
    const img = (await this.#records.get(key))?.outputs[index];
    return img ? this.#read(img) : undefined;
  }

  async copyInputs(fromKey: string, toKey: string): Promise<void> {
    const [from, to] = await Promise.all([this.#records.get(fromKey), this.#records.get(toKey)]);
    if (!from || !to) return;
    to.inputs = await this.#keep(toKey, 'in', await this.readInputs(fromKey));
    await this.#records.put(toKey, to);
  }

  async remove(key: string): Promise<void> {
    const record = await this.#records.get(key);
    if (!record) return;
    await Promise.all([...record.inputs, ...record.outputs].map((img) => this.#images.delete(img.file)));
    await this.#records.delete(key);
  }

  async claimInterrupted(): Promise<JobRecord[]> {
    const found: JobRecord[] = [];
    for (const { key, value } of await this.#records.claimOrphans()) {
      if (value.status === 'pending' || value.status === 'running') found.push(value);
      else await this.#records.put(key, value, { hold: false });
    }
    return found.sort((a, b) => a.createdAt - b.createdAt);
  }

  runsElsewhere(key: string): Promise<boolean> {
    return this.#records.heldElsewhere(key);
  }

  async close(): Promise<void> {
    // The state store is closed by its opener.
  }

  /** Keeps copies of images within the bound; one over it is left out (its buttons say the job is too old). */
  async #keep(key: string, prefix: 'in' | 'out', images: readonly InputImage[]): Promise<StoredImage[]> {
    const kept: StoredImage[] = [];
    for (const [i, img] of images.entries()) {
      const file = `${key}-${prefix}-${i}`;
      if (img.data.length > MAX_KEPT_IMAGE_BYTES) {
        this.#logger.warn({ jobKey: key, bytes: img.data.length, max: MAX_KEPT_IMAGE_BYTES }, 'an image is too large to keep for its buttons');
        continue;
      }
      try {
        await this.#images.put(file, { data: img.data.toString('base64'), filename: img.filename });
        kept.push({ file, filename: img.filename, bytes: img.data.length });
      } catch (error) {
        this.#logger.warn({ err: loggableError(error), jobKey: key }, 'could not keep an image for its buttons');
      }
    }
    // A job's inputs go together: with one left out, none is kept.
    if (prefix === 'in' && kept.length < images.length) {
      await Promise.all(kept.map((img) => this.#images.delete(img.file)));
      return [];
    }
    return kept;
  }

  async #read(img: StoredImage): Promise<InputImage | undefined> {
    const kept = await this.#images.get(img.file);
    return kept ? { data: Buffer.from(kept.data, 'base64'), filename: kept.filename } : undefined;
  }
}
