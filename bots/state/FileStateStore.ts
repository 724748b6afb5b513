import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkSpace, encodeValue, newOwnerId, STATE_KEY_PATTERN, type Notice, type PutOptions, type Space, type SpaceDefinition, type StateEntry, type StateStore } from './StateStore.js';

/** Records hold people's prompts: only the bot's user may read them. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const PRUNE_EVERY_MS = 60 * 60_000;
const STALE_TEMP_MS = 60_000;
/** The holder of records written before holders existed: no process alive holds them. */
const LEGACY_HOLDER = 'legacy';

interface Envelope {
  pictorState: 1;
  holder: string | null;
  value: unknown;
}

export interface FileStateStoreOptions {
  dataDir: string;
  /** How often expired records are dropped while running. Default hourly (and at start). */
  pruneEveryMs?: number | undefined;
  owner?: string | undefined;
}

/**
 * The data-folder backend: one JSON file per record under the space's folder
 * (`<dataDir>/<dir>/<key>.json`), written atomically (temp file, then
 * rename); folders 0700, files 0600. A record expires `ttlMs` after its last
 * write (dropped at start and every `pruneEveryMs`). One process per data
 * folder: a record held by any other process id was left by a process that is
 * gone. Files written before holders existed (the bare record) are read as
 * they are, held by no live process.
 */
export class FileStateStore implements StateStore {
  readonly backend = 'file';
  readonly owner: string;
  readonly leaseMs = Number.POSITIVE_INFINITY;
  readonly dataDir: string;
  readonly #pruneEveryMs: number;
  readonly #spaces = new Map<string, FileSpace<unknown>>();
  #closed = false;

  constructor(options: FileStateStoreOptions) {
    this.dataDir = options.dataDir;
    this.owner = options.owner ?? newOwnerId();
    this.#pruneEveryMs = options.pruneEveryMs ?? PRUNE_EVERY_MS;
  }

  space<T>(definition: SpaceDefinition): Space<T> {
    checkSpace(definition);
    let space = this.#spaces.get(definition.name);
    if (!space) {
      space = new FileSpace(this.dataDir, definition, this.owner, this.#pruneEveryMs);
      this.#spaces.set(definition.name, space);
    }
    return space as Space<T>;
  }

  async ping(): Promise<boolean> {
    return !this.#closed;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const space of this.#spaces.values()) space.close();
  }
}

class FileSpace<T> implements Space<T> {
  readonly dir: string;
  readonly #dataDir: string;
  readonly #owner: string;
  readonly #pruneEveryMs: number;
  #opening: Promise<void> | undefined;
  #pruneTimer: NodeJS.Timeout | undefined;
  /** Writes of one record run one after the other (a put may read the holder first). */
  readonly #queues = new Map<string, Promise<unknown>>();

  constructor(
    dataDir: string,
    readonly definition: SpaceDefinition,
    owner: string,
    pruneEveryMs: number,
  ) {
    this.#dataDir = dataDir;
    this.dir = join(dataDir, definition.dir);
    this.#owner = owner;
    this.#pruneEveryMs = pruneEveryMs;
  }

  open(): Promise<void> {
    this.#opening ??= (async () => {
      await mkdir(this.#dataDir, { recursive: true, mode: DIR_MODE });
      await mkdir(this.dir, { recursive: true, mode: DIR_MODE });
      // Folders and files made by an older version were world-readable.
      let dir = this.dir;
      while (dir.length > this.#dataDir.length) {
        await chmod(dir, DIR_MODE);
        dir = join(dir, '..');
      }
      for (const name of await readdir(this.dir)) await chmod(join(this.dir, name), FILE_MODE).catch(() => undefined);
      await this.prune();
      this.#pruneTimer = setInterval(() => void this.prune().catch(() => undefined), this.#pruneEveryMs);
      this.#pruneTimer.unref();
    })();
    return this.#opening;
  }

  close(): void {
    clearInterval(this.#pruneTimer);
  }

  /** Drops records past their TTL, and temp files a crash left (a minute old: younger ones may be writes under way). */
  async prune(): Promise<void> {
    const now = Date.now();
    for (const name of await readdir(this.dir)) {
      const path = join(this.dir, name);
      try {
        const age = now - (await stat(path)).mtimeMs;
        if (age > (name.endsWith('.tmp') ? STALE_TEMP_MS : this.definition.ttlMs)) await rm(path, { force: true });
      } catch {
        // Gone meanwhile: nothing to do.
      }
    }
  }

  async get(key: string): Promise<T | undefined> {
    const envelope = await this.#read(key);
    return envelope?.value as T | undefined;
  }

  async put(key: string, value: T, options: PutOptions = {}): Promise<void> {
    if (!STATE_KEY_PATTERN.test(key)) throw new Error(`not a state key: ${key}`);
    const text = encodeValue(this.definition, value);
    await this.#serial(key, async () => {
      await this.open();
      const holder = options.hold === undefined ? ((await this.#read(key))?.holder ?? null) : options.hold ? this.#owner : null;
      await this.#write(key, `{"pictorState":1,"holder":${JSON.stringify(holder)},"value":${text}}`);
    });
  }

  delete(key: string): Promise<void> {
    if (!STATE_KEY_PATTERN.test(key)) return Promise.resolve();
    return this.#serial(key, () => rm(this.#path(key), { force: true }));
  }

  async claimOrphans(): Promise<StateEntry<T>[]> {
    await this.open();
    const claimed: StateEntry<T>[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      if (!name.endsWith('.json')) continue;
      const key = name.slice(0, -'.json'.length);
      if (!STATE_KEY_PATTERN.test(key)) continue;
      const taken = await this.#serial(key, async () => {
        const envelope = await this.#read(key);
        if (!envelope?.holder || envelope.holder === this.#owner) return undefined;
        await this.#write(key, JSON.stringify({ pictorState: 1, holder: this.#owner, value: envelope.value } satisfies Envelope));
        return envelope.value as T;
      });
      if (taken !== undefined) claimed.push({ key, value: taken });
    }
    return claimed;
  }

  async heldElsewhere(): Promise<boolean> {
    // One process per data folder: any other holder is gone.
    return false;
  }

  /** Keys taken by `claimOnce`, with when they were taken, oldest first (one process: memory is enough). */
  readonly #claimed = new Map<string, number>();

  async claimOnce(key: string): Promise<boolean> {
    if (!STATE_KEY_PATTERN.test(key)) return false;
    const now = Date.now();
    for (const [old, at] of this.#claimed) {
      if (now - at < this.definition.ttlMs) break;
      this.#claimed.delete(old);
    }
    if (this.#claimed.has(key)) return false;
    this.#claimed.set(key, now);
    return true;
  }

  async notifyHolder(_key: string, _notice: Notice): Promise<boolean> {
    // One process per data folder: the holder of a running job is this one.
    return false;
  }

  async onNotice(): Promise<void> {
    // Nobody else to hear from.
  }

  #path(key: string): string {
    return join(this.dir, `${key}.json`);
  }

  async #read(key: string): Promise<Envelope | undefined> {
    if (!STATE_KEY_PATTERN.test(key)) return undefined;
    await this.open();
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(this.#path(key), 'utf8'));
    } catch {
      return undefined;
    }
    if (parsed && typeof parsed === 'object' && (parsed as Partial<Envelope>).pictorState === 1) return parsed as Envelope;
    // A file from before holders: the bare record.
    return { pictorState: 1, holder: LEGACY_HOLDER, value: parsed };
  }

  async #write(key: string, text: string): Promise<void> {
    const path = this.#path(key);
    const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, text, { encoding: 'utf8', mode: FILE_MODE });
    await rename(tmp, path);
  }

  #serial<R>(key: string, run: () => Promise<R>): Promise<R> {
    const previous = this.#queues.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(run);
    this.#queues.set(key, next);
    void next
      .finally(() => {
        if (this.#queues.get(key) === next) this.#queues.delete(key);
      })
      .catch(() => undefined);
    return next;
  }
}
