import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { FileStateStore, type Space, type SpaceDefinition, type StateStore } from '../state/index.js';
import { BACKGROUNDS, LIMITS, MODERATIONS, OUTPUT_FORMATS, QUALITIES, SIZES } from '../../src/index.js';

const JobOptionsSchema = z.object({
  n: z.int().min(LIMITS.nMin).max(LIMITS.nMax).optional(),
  size: z.enum(SIZES).optional(),
  quality: z.enum(QUALITIES).optional(),
  background: z.enum(BACKGROUNDS).optional(),
  output_format: z.enum(OUTPUT_FORMATS).optional(),
  output_compression: z.int().min(LIMITS.compressionMin).max(LIMITS.compressionMax).optional(),
  moderation: z.enum(MODERATIONS).optional(),
});

const FileRefSchema = z.object({ id: z.string(), name: z.string().optional() });

/** What a finished job's message says at its end (saved with its images, so a message whose "Done" a stop cut off can still show it). */
const ResultSchema = z.object({
  size: z.string(),
  quality: z.string(),
  format: z.string(),
  cost: z.object({ perImageUsd: z.number(), totalUsd: z.number(), n: z.number(), basis: z.enum(['table', 'estimate']), reason: z.string().optional() }),
  elapsedMs: z.number(),
  images: z.number(),
  where: z.enum(['channel', 'thread', 'dm']).optional(),
});

/**
 * What a Reroll or Edit button needs after a restart: the request, where its
 * message is, and the files that went in and came out (Slack keeps the files;
 * the bot keeps their ids, never their bytes).
 */
export const SavedRequestSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  kind: z.enum(['generate', 'edit']),
  prompt: z.string(),
  options: JobOptionsSchema,
  inputFiles: z.array(FileRefSchema).default([]),
  outputFiles: z.array(FileRefSchema).default([]),
  /** The previews posted in the thread while the job ran (saved at its end), so Delete removes them with the result. */
  previewFiles: z.array(FileRefSchema).default([]),
  /** The finished job's result, saved with `outputFiles`. */
  result: ResultSchema.optional(),
  teamId: z.string(),
  userId: z.string(),
  channelId: z.string(),
  /** The thread the job's message was posted in, if any. */
  threadTs: z.string().optional(),
  /** The job's own message, once posted. */
  messageTs: z.string().optional(),
  /** The message with a finished job's Reroll, Edit and Delete, right after its images (Delete removes it too). */
  actionsMessage: z.object({ channelId: z.string(), ts: z.string() }).optional(),
  createdAt: z.number(),
  /** The language of the job's messages (the requester's); English for requests saved before it was kept. */
  locale: z.string().max(35).optional(),
  /** `active` from submission until the message shows the job's end; a crash leaves it `active` (see the start-up sweep). */
  status: z.enum(['active', 'ended']).optional(),
});

export type SavedRequest = z.output<typeof SavedRequestSchema>;
export type NewRequest = Omit<SavedRequest, 'version' | 'id' | 'createdAt' | 'outputFiles' | 'inputFiles' | 'previewFiles' | 'result' | 'actionsMessage'> &
  Partial<Pick<SavedRequest, 'inputFiles' | 'outputFiles'>>;

const ID_PATTERN = /^[A-Za-z0-9_-]{16}$/;
const DEFAULT_MAX_AGE_DAYS = 90;
/** A record holds a prompt (at most a few thousand characters) and file ids: 64 KiB is far above any real one. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** Where Slack requests live in the bots' state store: `slack/requests/` in the data folder, `<prefix>:bots:slack-requests:…` in Redis. */
export function slackRequestSpace(maxAgeDays = DEFAULT_MAX_AGE_DAYS): SpaceDefinition {
  return { name: 'slack-requests', dir: join('slack', 'requests'), ttlMs: maxAgeDays * 24 * 3600_000, maxValueBytes: MAX_REQUEST_BYTES };
}

export type RequestStoreOptions =
  | { state: StateStore; maxAgeDays?: number | undefined }
  /** A store of its own in the data folder (one process). */
  | { dataDir: string; maxAgeDays?: number | undefined; pruneEveryMs?: number | undefined };

/**
 * The Slack requests, in the bots' state store (the data folder: one small
 * JSON file per request under `<dataDir>/slack/requests/`; or Redis). A
 * request is held by the process running its job from submission until its
 * message shows the end; if that process dies, a surviving one (or the next
 * start) claims it and marks it interrupted. Requests older than the kept age
 * (default 90 days since their last change) are dropped. Ids are random and
 * checked before they touch a path or a key, since they come back in button
 * values.
 */
export class RequestStore {
  /** The folder of the requests, with the data-folder backend. */
  readonly dir: string | undefined;
  readonly state: StateStore;
  readonly #space: Space<SavedRequest>;
  readonly #ownsState: boolean;
  /** Updates of one request run one after the other (each reads, then writes the whole record). */
  readonly #updates = new Map<string, Promise<unknown>>();

  constructor(options: RequestStoreOptions) {
    this.#ownsState = !('state' in options);
    this.state = 'state' in options ? options.state : new FileStateStore({ dataDir: options.dataDir, pruneEveryMs: options.pruneEveryMs });
    this.#space = this.state.space<SavedRequest>(slackRequestSpace(options.maxAgeDays));
    this.dir = 'dataDir' in options ? join(options.dataDir, 'slack', 'requests') : this.state instanceof FileStateStore ? join(this.state.dataDir, 'slack', 'requests') : undefined;
  }

  get space(): Space<SavedRequest> {
    return this.#space;
  }

  /** Makes the store ready (the data folder: the private folder, a first prune, and an hourly one while open). */
  async open(): Promise<void> {
    await this.#space.open();
  }

  close(): void {
    if (this.#ownsState) void this.state.close();
  }

  /**
   * Takes the requests whose job ran in a process that is gone (at start: the
   * last one; with Redis: also a replica whose lease lapsed). Each is handed to
   * one process only; ended ones are simply released. Oldest first.
   */
  async claimInterrupted(): Promise<SavedRequest[]> {
    const found: SavedRequest[] = [];
    for (const { key, value } of await this.#space.claimOrphans()) {
      const request = SavedRequestSchema.safeParse(value);
      if (request.success && request.data.status === 'active') found.push(request.data);
      else if (request.success) await this.#space.put(key, request.data, { hold: false });
      else await this.#space.delete(key);
    }
    return found.sort((a, b) => a.createdAt - b.createdAt);
  }

  async create(input: NewRequest): Promise<SavedRequest> {
    const record = SavedRequestSchema.parse({
      ...input,
      version: 1,
      id: randomBytes(12).toString('base64url'),
      createdAt: Date.now(),
      inputFiles: input.inputFiles ?? [],
      outputFiles: input.outputFiles ?? [],
    });
    await this.#space.put(record.id, record, { hold: record.status === 'active' });
    return record;
  }

  /** The record, or undefined when the id is malformed, unknown or unreadable. */
  async get(id: string): Promise<SavedRequest | undefined> {
    if (!ID_PATTERN.test(id)) return undefined;
    try {
      const parsed = SavedRequestSchema.safeParse(await this.#space.get(id));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  update(id: string, patch: Partial<Pick<SavedRequest, 'messageTs' | 'actionsMessage' | 'outputFiles' | 'previewFiles' | 'result' | 'threadTs' | 'status'>>): Promise<SavedRequest | undefined> {
    const previous = this.#updates.get(id) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.#update(id, patch));
    this.#updates.set(id, next);
    void next.finally(() => {
      if (this.#updates.get(id) === next) this.#updates.delete(id);
    }).catch(() => undefined);
    return next;
  }

  async #update(id: string, patch: Partial<Pick<SavedRequest, 'messageTs' | 'actionsMessage' | 'outputFiles' | 'previewFiles' | 'result' | 'threadTs' | 'status'>>): Promise<SavedRequest | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    const next = SavedRequestSchema.parse({ ...current, ...patch });
    // The job's end is shown: nobody has to sweep it any more.
    await this.#space.put(id, next, { hold: next.status === 'ended' ? false : undefined });
    return next;
  }

  /** Forgets a request (one the runner refused: it has no message and no buttons). */
  async delete(id: string): Promise<void> {
    if (ID_PATTERN.test(id)) await this.#space.delete(id);
  }
}
