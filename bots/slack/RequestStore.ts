import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
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
  teamId: z.string(),
  userId: z.string(),
  channelId: z.string(),
  /** The thread the job's message was posted in, if any. */
  threadTs: z.string().optional(),
  /** The job's own message, once posted. */
  messageTs: z.string().optional(),
  createdAt: z.number(),
  /** `active` from submission until the message shows the job's end; a crash leaves it `active` (see the start-up sweep). */
  status: z.enum(['active', 'ended']).optional(),
});

export type SavedRequest = z.output<typeof SavedRequestSchema>;
export type NewRequest = Omit<SavedRequest, 'version' | 'id' | 'createdAt' | 'outputFiles' | 'inputFiles'> &
  Partial<Pick<SavedRequest, 'inputFiles' | 'outputFiles'>>;

const ID_PATTERN = /^[A-Za-z0-9_-]{16}$/;
/** Requests hold people's prompts: only the bot's user may read them. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const PRUNE_EVERY_MS = 60 * 60_000;
const STALE_TEMP_MS = 60_000;

/**
 * One small JSON file per request under `<dataDir>/slack/requests/`, written
 * atomically (temp file, then rename), folders 0700 and files 0600. Requests
 * older than the kept age are pruned at open and every hour while running.
 * Ids are random and checked before they touch a path, since they come back
 * in button values.
 */
export class RequestStore {
  readonly dir: string;
  readonly #maxAgeMs: number;
  /** Updates of one request run one after the other (each reads, then writes the whole record). */
  readonly #updates = new Map<string, Promise<unknown>>();

  readonly #dataDir: string;
  readonly #pruneEveryMs: number;
  #pruneTimer: NodeJS.Timeout | undefined;

  constructor(options: { dataDir: string; maxAgeDays?: number | undefined; pruneEveryMs?: number | undefined }) {
    this.#dataDir = options.dataDir;
    this.dir = join(options.dataDir, 'slack', 'requests');
    this.#maxAgeMs = (options.maxAgeDays ?? 90) * 24 * 3600_000;
    this.#pruneEveryMs = options.pruneEveryMs ?? PRUNE_EVERY_MS;
  }

  /** Creates the folder (private), drops records older than the kept age, and keeps doing so while open. */
  async open(): Promise<void> {
    await mkdir(this.#dataDir, { recursive: true, mode: DIR_MODE });
    await mkdir(this.dir, { recursive: true, mode: DIR_MODE });
    // Folders and files made by an older version were world-readable.
    for (const dir of [dirname(this.dir), this.dir]) await chmod(dir, DIR_MODE);
    for (const name of await readdir(this.dir)) await chmod(join(this.dir, name), FILE_MODE).catch(() => undefined);
    await this.prune();
    this.#pruneTimer = setInterval(() => void this.prune().catch(() => undefined), this.#pruneEveryMs);
    this.#pruneTimer.unref();
  }

  close(): void {
    clearInterval(this.#pruneTimer);
  }

  /** Drops records older than the kept age, and temp files a crash left (a minute old: younger ones may be writes under way). */
  async prune(): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.dir)) {
      const path = join(this.dir, name);
      try {
        const age = now - (await stat(path)).mtimeMs;
        if (age > (name.endsWith('.tmp') ? STALE_TEMP_MS : this.#maxAgeMs)) await rm(path, { force: true });
      } catch {
        // Gone meanwhile: nothing to do.
      }
    }
  }

  /** Requests whose job had not ended (at start: those a dead process left behind). */
  async unfinished(): Promise<SavedRequest[]> {
    const found: SavedRequest[] = [];
    for (const name of await readdir(this.dir)) {
      if (!name.endsWith('.json')) continue;
      const request = await this.get(name.slice(0, -'.json'.length));
      if (request?.status === 'active') found.push(request);
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
    await this.#write(record);
    return record;
  }

  /** The record, or undefined when the id is malformed, unknown or unreadable. */
  async get(id: string): Promise<SavedRequest | undefined> {
    if (!ID_PATTERN.test(id)) return undefined;
    try {
      const parsed = SavedRequestSchema.safeParse(JSON.parse(await readFile(join(this.dir, `${id}.json`), 'utf8')));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  update(id: string, patch: Partial<Pick<SavedRequest, 'messageTs' | 'outputFiles' | 'threadTs' | 'status'>>): Promise<SavedRequest | undefined> {
    const previous = this.#updates.get(id) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.#update(id, patch));
    this.#updates.set(id, next);
    void next.finally(() => {
      if (this.#updates.get(id) === next) this.#updates.delete(id);
    }).catch(() => undefined);
    return next;
  }

  async #update(id: string, patch: Partial<Pick<SavedRequest, 'messageTs' | 'outputFiles' | 'threadTs' | 'status'>>): Promise<SavedRequest | undefined> {
    const current = await this.get(id);
    if (!current) return undefined;
    const next = SavedRequestSchema.parse({ ...current, ...patch });
    await this.#write(next);
    return next;
  }

  /** Forgets a request (one the runner refused: it has no message and no buttons). */
  async delete(id: string): Promise<void> {
    if (ID_PATTERN.test(id)) await rm(join(this.dir, `${id}.json`), { force: true });
  }

  async #write(record: SavedRequest): Promise<void> {
    const path = join(this.dir, `${record.id}.json`);
    const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, JSON.stringify(record), { encoding: 'utf8', mode: FILE_MODE });
    await rename(tmp, path);
  }
}
