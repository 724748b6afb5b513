import { chmod, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PictorError, type LoggerLike } from 'pictor';
import { removeLeftoverTemps, writeFileAtomically } from 'pictor/internal';
import { BaseSpace, checkSpace, decodeValue, newOwnerId, readable, StateClosedError, STATE_KEY_PATTERN, UNREADABLE, type Change, type Found, type Space, type SpaceDefinition, type StateEntry, type StateStore } from './StateStore.js';

/** Records hold people's prompts: only the bot's user may read them. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const PRUNE_EVERY_MS = 60 * 60_000;
/** The holder of records written before holders existed (the bare record): no process alive holds them. */
export const LEGACY_HOLDER = 'legacy';

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
  /** Every space the process declares: what a crash left in their folders goes with `removeLeftovers`, opened or not. */
  spaces?: readonly SpaceDefinition[] | undefined;
  /** Told, once at open, of an entry where a record belongs that is not a file (a folder): its reads throw. */
  logger?: LoggerLike | undefined;
}

/**
 * The data-folder backend: `<dataDir>/<dir>/<key>.json` (`{ pictorState: 1, holder, value }`) or a binary space's
 * `<key>.bin`, written atomically; folders 0700, files 0600. One process per data folder: another holder, or a
 * temporary file no write of this one is making, was left by a process that is gone. Bounds from an index read at start.
 */
export class FileStateStore implements StateStore {
  readonly owner: string;
  readonly leaseMs = Number.POSITIVE_INFINITY;
  readonly dataDir: string;
  readonly #pruneEveryMs: number;
  readonly #spaces = new Map<string, FileSpace<unknown>>();
  readonly #declared: readonly SpaceDefinition[];
  readonly #logger: LoggerLike | undefined;
  #closed = false;

  constructor(options: FileStateStoreOptions) {
    this.dataDir = options.dataDir;
    this.owner = options.owner ?? newOwnerId();
    this.#pruneEveryMs = options.pruneEveryMs ?? PRUNE_EVERY_MS;
    this.#declared = options.spaces ?? [];
    this.#logger = options.logger;
  }

  space<T>(definition: SpaceDefinition): Space<T> {
    checkSpace(definition);
    let space = this.#spaces.get(definition.name);
    if (!space) this.#spaces.set(definition.name, (space = new FileSpace(this.dataDir, definition, this.owner, this.#pruneEveryMs, () => this.#closed, this.#logger)));
    return space as Space<T>;
  }

  async removeLeftovers(): Promise<void> {
    const definitions = [...this.#declared, ...[...this.#spaces.values()].map((space) => space.definition)];
    for (const dir of new Set(definitions.map((definition) => spaceDir(this.dataDir, definition)))) await removeLeftoverTemps(dir);
  }

  get closing(): boolean {
    return this.#closed;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#spaces.values()].map((space) => space.close()));
  }
}

/** A space's folder: `<dataDir>/<dir>`. */
const spaceDir = (dataDir: string, definition: SpaceDefinition): string => join(dataDir, definition.dir);

class FileSpace<T> extends BaseSpace<T> {
  readonly dir: string;
  #opening: Promise<void> | undefined;
  #pruneTimer: NodeJS.Timeout | undefined;
  /** The records on disk, oldest write first: when each was written and its size (for the bounds). */
  readonly #index = new Map<string, { at: number; bytes: number }>();
  #bytes = 0;
  /** Writes of one record run one after the other. */
  readonly #queues = new Map<string, Promise<unknown>>();
  /** Records the bounds dropped whose files wait for their key's turn to be removed, each as it is listed, and their bytes. */
  readonly #dropping = new Map<string, { at: number; bytes: number }>();
  #droppingBytes = 0;
  /** Records listed at open whose entry is not a regular file (a folder): read, they throw, never none. */
  readonly #notFiles = new Set<string>();

  constructor(
    readonly dataDir: string,
    definition: SpaceDefinition,
    owner: string,
    readonly pruneEveryMs: number,
    readonly closed: () => boolean,
    readonly logger: LoggerLike | undefined,
  ) {
    super(definition, owner);
    this.dir = spaceDir(dataDir, definition);
  }

  protected override assertOpen(): void {
    if (this.closed()) throw new StateClosedError(this.definition.name);
  }

  #open(): Promise<void> {
    this.#opening ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: DIR_MODE });
      // Folders and files made by an older version were world-readable.
      for (let dir = this.dir; dir.length > this.dataDir.length; dir = join(dir, '..')) await chmod(dir, DIR_MODE);
      const found: [string, { at: number; bytes: number }][] = [];
      for (const name of await readdir(this.dir)) {
        const path = join(this.dir, name);
        const info = await stat(path).catch(() => undefined);
        const key = name.slice(0, -this.#extension.length);
        const record = name.endsWith(this.#extension) && STATE_KEY_PATTERN.test(key);
        // A folder where a record belongs may stand for one that held restrictions: listed, so that reading it throws.
        if (info && !info.isFile() && record) {
          this.#notFiles.add(key);
          this.logger?.warn({ path }, 'not a file where a record belongs (a folder?): reads of it fail until it is moved aside');
          found.push([key, { at: info.mtimeMs, bytes: 0 }]);
        }
        if (!info?.isFile()) continue;
        await chmod(path, FILE_MODE).catch(() => undefined);
        if (record) found.push([key, { at: info.mtimeMs, bytes: info.size }]);
      }
      await removeLeftoverTemps(this.dir);
      for (const [key, entry] of found.sort((a, b) => a[1].at - b[1].at)) this.#noteWrite(key, entry.bytes, entry.at);
      this.#prune();
      // A call queued just before the store closed opens it after the close began: its timer would outlive the close.
      if (this.definition.ttlMs !== undefined && !this.closed()) this.#pruneTimer = setInterval(() => this.#prune(), this.pruneEveryMs).unref();
    })();
    return this.#opening;
  }

  async close(): Promise<void> {
    // The open under way (it may start the prune timer), then each record's queue.
    await this.#opening?.catch(() => undefined);
    clearInterval(this.#pruneTimer);
    while (this.#queues.size > 0) await Promise.allSettled([...this.#queues.values()]);
  }

  /**
   * Drops the oldest records while the space is past a bound or they are past the TTL (never `keep`, the one just
   * written). Each goes as a delete does, in its key's turn: unlisted once its file is gone; one whose file cannot be
   * removed stays listed where it was (still there, a forget still meets it). Until then the bounds count it out and
   * reads pass it over.
   */
  #prune(keep?: string): void {
    const { maxCount = Infinity, maxBytes = Infinity } = this.definition;
    for (const [key, entry] of this.#index) {
      if (!this.#expired(entry.at) && this.#index.size - this.#dropping.size <= maxCount && this.#bytes - this.#droppingBytes <= maxBytes) break;
      if (key === keep || this.#dropping.has(key)) continue;
      this.#dropping.set(key, entry);
      this.#droppingBytes += entry.bytes;
      // Not awaited: a write under way waits for its own turn, never for another's. A write of the key queued before
      // this drop makes it the latest record: its file stays.
      void this.#serial(key, () => (this.#index.get(key) === entry ? this.#remove(key) : Promise.resolve()))
        .catch(() => undefined)
        .finally(() => this.#dropping.get(key) === entry && this.#undrop(key));
    }
  }

  /** The record is no longer one the bounds dropped: its file is gone, it was written anew, or (not removed) it counts again. */
  #undrop(key: string): void {
    this.#droppingBytes -= this.#dropping.get(key)?.bytes ?? 0;
    this.#dropping.delete(key);
  }

  /** Whether the index lists the record, not past the TTL nor dropped by the bounds. */
  async #listed(key: string): Promise<boolean> {
    await this.#open();
    const at = this.#index.get(key)?.at;
    return at !== undefined && !this.#expired(at) && !this.#dropping.has(key);
  }

  /** Whether a record written at `at` is past the space's TTL. */
  #expired(at: number): boolean {
    return this.definition.ttlMs !== undefined && at < Date.now() - this.definition.ttlMs;
  }

  #noteWrite(key: string, bytes: number, at = Date.now()): void {
    this.#noteDelete(key);
    this.#index.set(key, { at, bytes });
    this.#bytes += bytes;
  }

  #noteDelete(key: string): void {
    this.#notFiles.delete(key);
    this.#undrop(key);
    this.#bytes -= this.#index.get(key)?.bytes ?? 0;
    this.#index.delete(key);
  }

  get #extension(): string {
    return this.definition.binary ? '.bin' : '.json';
  }

  #path(key: string): string {
    return join(this.dir, `${key}${this.#extension}`);
  }

  /**
   * The envelope, or `UNREADABLE` (damaged: not JSON). A file that fails to read throws. A listed record whose file is
   * gone is forgotten: at once in the key's queue (`queued`: no write of it can be under way), else through `#forgetGone`.
   */
  async #read(key: string, queued: boolean): Promise<Envelope | typeof UNREADABLE | undefined> {
    if (!(await this.#listed(key))) return undefined;
    const found = await this.#readFile(key);
    if (found === undefined && queued) this.#noteDelete(key);
    else if (found === undefined) await this.#serial(key, () => this.#forgetGone(key));
    if (found === undefined) return found;
    const parsed = decodeValue(this.definition, found);
    if (parsed === UNREADABLE) return parsed;
    if (this.definition.binary) return { pictorState: 1, holder: null, value: parsed };
    if (typeof parsed === 'object' && parsed !== null && (parsed as Partial<Envelope>).pictorState === 1) return parsed as Envelope;
    // A file from before holders: the bare record.
    return { pictorState: 1, holder: LEGACY_HOLDER, value: parsed };
  }

  /**
   * The record's file, or `undefined` when it is not there. A failure names the path: a folder in its place throws
   * EISDIR; another entry listed at open that is not a file (a pipe would never end a read) throws EINVAL.
   */
  async #readFile(key: string): Promise<Buffer | undefined> {
    const path = this.#path(key);
    if (this.#notFiles.has(key)) {
      const info = await stat(path).catch((error: unknown) => missing(namingPath(error, path)));
      if (info && !info.isFile()) throw notAFile(path, info.isDirectory());
      this.#notFiles.delete(key);
    }
    return readFile(path).catch((error: unknown) => missing(namingPath(error, path)));
  }

  /** Writes the value as kept, with its holder: this process, none, or (`hold` absent) `current`'s. */
  async #write(key: string, encoded: string | Buffer, hold: boolean | undefined, current?: Envelope): Promise<void> {
    const holder = hold === undefined ? (current?.holder ?? null) : hold ? this.owner : null;
    const data = typeof encoded === 'string' ? `{"pictorState":1,"holder":${JSON.stringify(holder)},"value":${encoded}}` : encoded;
    await writeFileAtomically(this.#path(key), data, { mode: FILE_MODE });
    this.#noteWrite(key, Buffer.byteLength(data));
    this.#prune(key);
  }

  /** Drops from the index a record whose file was removed behind the store; run in the key's queue, after a second look. */
  async #forgetGone(key: string): Promise<void> {
    if (!this.#index.has(key)) return;
    const gone = await stat(this.#path(key)).then(() => false, isMissing);
    if (gone) this.#noteDelete(key);
  }

  /** Unlisted only once its file is gone: one that could not be removed stays counted and found by scans (it is still there). */
  async #remove(key: string): Promise<void> {
    await rm(this.#path(key), { force: true });
    this.#noteDelete(key);
  }

  protected async readRecord(key: string): Promise<Found<T>> {
    const envelope = await this.#read(key, false);
    return envelope === UNREADABLE ? UNREADABLE : (envelope?.value as T | undefined);
  }

  /** As `read` would answer, from the index and a stat (a file that cannot be looked at throws, as `read` does). */
  protected async hasRecord(key: string): Promise<boolean> {
    if (!(await this.#listed(key))) return false;
    const found = await stat(this.#path(key)).then(() => true, (error: unknown) => missing(error) ?? false);
    if (!found) await this.#serial(key, () => this.#forgetGone(key));
    return found;
  }

  protected async putRecord(key: string, kept: string | Buffer, hold: boolean | undefined): Promise<void> {
    await this.#serial(key, async () => {
      const current = hold === undefined && typeof kept === 'string' ? readable(await this.#read(key, true)) : undefined;
      await this.#write(key, kept, hold, current);
    });
  }

  protected changeRecord(key: string, step: (found: Found<T>) => Change): Promise<void> {
    return this.#serial(key, async () => {
      const envelope = await this.#read(key, true);
      // A file kept without a value (a hand edit) is a record all the same: a claim of it stays taken.
      const change = step(envelope === UNREADABLE || (envelope && !Object.hasOwn(envelope, 'value')) ? UNREADABLE : (envelope?.value as T | undefined));
      if (change?.kept !== undefined) await this.#write(key, change.kept, change.hold, readable(envelope));
      else if (change) await this.#remove(key);
    });
  }

  protected deleteRecord(key: string): Promise<void> {
    return this.#serial(key, () => this.#remove(key));
  }

  /** Every record; one whose file fails to read is passed over, the others still come, and then the scan throws naming how many. */
  protected async *records(): AsyncIterable<[string, Found<T>]> {
    await this.#open();
    const failed = new UnreadFiles(this.definition.name, this.dir);
    for (const key of [...this.#index.keys()]) {
      const found = await this.read(key).then((value): { value: Found<T> } => ({ value }), failed.note(this.#path(key)));
      if (found) yield [key, found.value];
    }
    failed.throwIfAny();
  }

  protected async deleteTexts(doomed: (text: string) => boolean): Promise<number> {
    await this.#open();
    let deleted = 0;
    const failed = new UnreadFiles(this.definition.name, this.dir);
    // Read in the key's queue: no write of it is under way, so what is read is what is deleted.
    for (const key of [...this.#index.keys()]) {
      const path = this.#path(key);
      await this.#serial(key, async () => {
        const text = (await this.#readFile(key))?.toString('utf8');
        if (text === undefined || !doomed(text)) return;
        await this.#remove(key).then(() => deleted++, failed.note(path, 'deleted'));
      }).catch(failed.note(path, 'read'));
    }
    failed.throwIfAny();
    return deleted;
  }

  async *keys(): AsyncIterable<string> {
    this.assertOpen();
    await this.#open();
    for (const [key, { at }] of [...this.#index]) if (!this.#expired(at) && !this.#dropping.has(key)) yield key;
  }

  protected async takeOrphans(): Promise<StateEntry<T>[]> {
    await this.#open();
    const claimed: StateEntry<T>[] = [];
    for (const key of [...this.#index.keys()]) {
      this.assertOpen();
      const taken = await this.#serial(key, async () => {
        // A record that fails to read now is left for the next sweep; the others are taken.
        const envelope = readable(await this.#read(key, true).catch(() => undefined));
        // One process per data folder: any other holder is gone.
        if (!envelope?.holder || envelope.holder === this.owner) return undefined;
        await this.#write(key, JSON.stringify(envelope.value), true);
        return envelope.value as T;
      });
      if (taken !== undefined) claimed.push({ key, value: taken });
    }
    return claimed;
  }

  protected async holderOf(key: string): Promise<string | null | undefined> {
    return readable(await this.#read(key, false))?.holder;
  }

  #serial<R>(key: string, run: () => Promise<R>): Promise<R> {
    const next = (this.#queues.get(key) ?? Promise.resolve()).catch(() => undefined).then(async () => {
      await this.#open();
      return run();
    });
    this.#queues.set(key, next);
    void next.finally(() => this.#queues.get(key) === next && this.#queues.delete(key)).catch(() => undefined);
    return next;
  }
}

/** A scan of a space met records whose files failed to read (EACCES, EISDIR) or, to delete, to be removed: it went on past them, then threw this. */
export class StateRecordsUnreadableError extends PictorError<'state_records_unreadable'> {
  constructor(space: string, dir: string, readonly files: readonly string[], cause: unknown, failed: readonly ('read' | 'deleted')[] = ['read']) {
    const why = (cause as NodeJS.ErrnoException | undefined)?.code ?? (cause instanceof Error ? cause.message : String(cause));
    const remedy = failed.includes('deleted') ? 'make them and their folder writable by the bot' : 'make them readable to the bot';
    super('state_records_unreadable', `${files.length} ${space} record(s) in ${dir} could not be ${failed.join(' or ')} (first: ${files[0]}, ${why}); the others were gone through: ${remedy}, or move them aside`, { cause });
  }
}

/** The files a scan could not read or delete, told at its end. A closed store stops the scan at once. */
class UnreadFiles {
  readonly #files: string[] = [];
  readonly #failed = new Set<'read' | 'deleted'>();
  #first: unknown;

  constructor(
    readonly space: string,
    readonly dir: string,
  ) {}

  note(file: string, failed: 'read' | 'deleted' = 'read'): (error: unknown) => undefined {
    return (error) => {
      if (error instanceof StateClosedError) throw error;
      if (this.#files.length === 0) this.#first = error;
      this.#files.push(file);
      this.#failed.add(failed);
      return undefined;
    };
  }

  throwIfAny(): void {
    if (this.#files.length > 0) throw new StateRecordsUnreadableError(this.space, this.dir, this.#files, this.#first, [...this.#failed]);
  }
}

/** Only a file that is not there is a missing record: any other failure is thrown, as Redis's are (not none, not damaged). */
function missing(error: unknown): undefined {
  if (isMissing(error)) return undefined;
  throw error;
}

/** A system error whose message names no path (a read of a folder: EISDIR) with the path named, its code kept. */
function namingPath(error: unknown, path: string): unknown {
  const failure = error as NodeJS.ErrnoException;
  if (!(error instanceof Error) || failure.code === undefined || failure.path !== undefined) return error;
  return Object.assign(new Error(`${error.message} '${path}'`, { cause: error }), { code: failure.code, errno: failure.errno, syscall: failure.syscall, path });
}

/** What reading an entry that is not a regular file throws, as the system would for a folder. */
function notAFile(path: string, folder: boolean): Error {
  const [code, what] = folder ? ['EISDIR', 'illegal operation on a directory'] : ['EINVAL', 'not a regular file'];
  return Object.assign(new Error(`${code}: ${what}, read '${path}'`), { code, syscall: 'read', path });
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
