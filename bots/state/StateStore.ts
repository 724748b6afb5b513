import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { safeJson } from 'pictor/internal';

/**
 * The bots' one storage room: every record the bots keep after the moment it was made is a record of a space
 * (`spaces.ts`), on the data folder (`FileStateStore`, one process) or Redis (`RedisStateStore`, any number). Pictor
 * keeps each space's bounds itself (Redis never evicts): a record expires `ttlMs` after its last write, a value over
 * `maxValueBytes` is refused, past `maxCount` or `maxBytes` the oldest go first. A record may be *held* by the process
 * running its job (through a lease); when that process is gone, `claimOrphans` hands it to one survivor.
 */
export interface SpaceDefinition {
  /** Names the space in Redis keys: a-z, 0-9 and `-`. */
  name: string;
  /** The space's folder in the data folder, e.g. `slack/requests`. */
  dir: string;
  /** A record is dropped this long after its last write; undefined: kept until deleted. */
  ttlMs: number | undefined;
  /** A larger value is refused (StateValueTooLargeError). */
  maxValueBytes: number;
  /** Most records kept; past it the oldest are dropped. */
  maxCount?: number | undefined;
  /** Most bytes of values kept; past it the oldest records are dropped. */
  maxBytes?: number | undefined;
  /** The values are bytes (a Buffer) kept as they are, never more than them in memory: only put, read and deleted, never held. */
  binary?: true | undefined;
  /**
   * Fields a member's forget keeps, no member's data (`forgetJobRecord`): a job record with one of them stays, without
   * its prompt and images, until they are taken out.
   */
  keptThroughForget?: readonly string[] | undefined;
}

export interface PutOptions {
  /** true: this process holds the record (its job runs here); false: no process does; absent: unchanged. */
  hold?: boolean | undefined;
}

export interface UpdateOptions<T = never> {
  /** As `PutOptions.hold`, or decided in the same write from the value `change` answered (not asked on a delete). */
  hold?: boolean | ((after: T) => boolean | undefined) | undefined;
  /** true: a record that is kept and damaged reaches `change` as `UNREADABLE`, not as undefined (none). A failing read throws, `change` unasked. */
  unreadable?: boolean | undefined;
}

/** What `update`'s `change` gets: the record or undefined, and `UNREADABLE` too when the options ask for it. */
export type UpdateCurrent<T, O extends UpdateOptions<T>> = T | undefined | (O extends { unreadable: true } ? typeof UNREADABLE : never);

export interface StateEntry<T> {
  key: string;
  value: T;
}

/**
 * What `Space.read` answers for a record kept but damaged (not JSON). A read that fails (permissions, a disk, a lost
 * connection) throws instead, on every backend: what could not be read now is neither none nor damaged, never written over.
 */
export const UNREADABLE: unique symbol = Symbol('unreadable record');

/** A small message between processes about one record (at most `MAX_NOTICE_BYTES` as JSON). */
export type Notice = Record<string, unknown>;
export const MAX_NOTICE_BYTES = 4096;

export interface StateStore {
  /** This process's id: the holder of the records of the jobs it runs. */
  readonly owner: string;
  /** How long a holder's lease lasts without renewal (file backend: for ever, one process per data folder). */
  readonly leaseMs: number;
  space<T>(definition: SpaceDefinition): Space<T>;
  /** Removes the temporary files writes a crash stopped left (a record's whole version), in every declared space: for the start and `forget`. */
  removeLeftovers(): Promise<void>;
  /** `close` began: what this process holds may be another's by now, so nothing of it is to be written any more. */
  readonly closing: boolean;
  /**
   * Gives the lease back (what this process holds is claimed by others at once); the data folder's store waits for the
   * writes under way and refuses every later call. A wait on Redis ends by `until` at the latest.
   */
  close(options?: { until?: number | undefined }): Promise<void>;
}

/** A call on the bots' state after it was closed: nothing is read or written. */
export class StateClosedError extends Error {
  override readonly name = 'StateClosedError';
  readonly code = 'state_closed';
  constructor(space: string) {
    super(`the bots' state is closed: nothing more is read from or written to ${space}`);
  }
}

/** A value over its space's bound: a bug or a hostile input, never silently cut. */
export class StateValueTooLargeError extends Error {
  readonly code = 'state_value_too_large';
  constructor(space: string, bytes: number, max: number) {
    super(`a ${space} record of ${bytes} bytes is over the bound of ${max} bytes`);
  }
}

/** What a claim keeps (`claimOnce`), so only its own release gives it back. */
export const CLAIM_TOKEN_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

/** A claim's token no other claim has: 128 random bits. */
export function newClaimToken(): string {
  return randomBytes(16).toString('hex');
}

/** The claim's token, checked: a token not of the pattern is a bug (it would be compared, never matched). */
function claimToken(token: string | undefined): string {
  if (token === undefined) return newClaimToken();
  if (!CLAIM_TOKEN_PATTERN.test(token)) throw new TypeError('a claim token is 8 to 64 of A-Z a-z 0-9 _ -');
  return token;
}

/** Keys come back in button values: only these reach a path or a Redis key. */
export const STATE_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const SPACE_NAME_PATTERN = /^[a-z0-9-]{1,32}$/;

export function checkSpace(definition: SpaceDefinition): void {
  const { name, ttlMs, maxValueBytes } = definition;
  if (!SPACE_NAME_PATTERN.test(name)) throw new Error(`a state space name must be 1 to 32 of a-z 0-9 -: ${name}`);
  if ((ttlMs !== undefined && !(ttlMs > 0)) || !(maxValueBytes > 0)) throw new Error(`the state space ${name} needs a positive TTL (or none) and a size bound`);
}

function checkKey(key: string): void {
  if (!STATE_KEY_PATTERN.test(key)) throw new Error(`not a state key: ${JSON.stringify(key.slice(0, 80))}`);
}

/** A value as it is kept: JSON, or a binary space's Buffer itself (never empty); either checked against the bound. */
function encodeValue(definition: SpaceDefinition, value: unknown): string | Buffer {
  if (definition.binary && (!Buffer.isBuffer(value) || value.length === 0)) throw new TypeError(`the ${definition.name} space keeps bytes (a Buffer, not empty)`);
  const kept = definition.binary ? (value as Buffer) : JSON.stringify(value);
  const bytes = Buffer.byteLength(kept);
  if (bytes > definition.maxValueBytes) throw new StateValueTooLargeError(definition.name, bytes, definition.maxValueBytes);
  return kept;
}

/** A value as kept, read back: a binary space's bytes as they are, else its JSON, or `UNREADABLE` when that is damaged (not JSON). */
export function decodeValue(definition: SpaceDefinition, kept: string | Buffer): unknown {
  const value = definition.binary ? kept : safeJson(kept.toString());
  return value === undefined ? UNREADABLE : value;
}

/** What `get` answers for what `read` found: a damaged record counts as none. */
export function readable<T>(found: T | typeof UNREADABLE): T | undefined {
  return found === UNREADABLE ? undefined : found;
}

/** A space of records, as every backend keeps it (`BaseSpace`'s public side). */
export type Space<T> = Pick<BaseSpace<T>, keyof BaseSpace<T>>;

/** A record as a backend found it: its value, `UNREADABLE`, or undefined (none). */
export type Found<T> = T | typeof UNREADABLE | undefined;
/** What a change writes for the record it found: the value as kept (undefined: delete it) and its hold; none: nothing. */
export type Change = { kept: string | undefined; hold: boolean | undefined } | undefined;

/**
 * A space's rules, the same on every backend: which keys reach storage, the bound and encoding of values, what
 * `update` and `entries` make of a record, which calls a binary space refuses. A backend adds only its storage.
 */
export abstract class BaseSpace<T> {
  constructor(
    readonly definition: SpaceDefinition,
    /** The owner of the store this space belongs to (each process's store has its own). */
    readonly owner: string,
  ) {}

  /** Throws once the store is closed (the data folder's store refuses every later call). */
  protected assertOpen(): void {}
  protected abstract readRecord(key: string): Promise<Found<T>>;
  protected abstract hasRecord(key: string): Promise<boolean>;
  protected abstract putRecord(key: string, kept: string | Buffer, hold: boolean | undefined): Promise<unknown>;
  /** Writes what `step` answers for the record as found, atomically for every process (`step` may run more than once). */
  protected abstract changeRecord(key: string, step: (found: Found<T>) => Change): Promise<void>;
  protected abstract deleteRecord(key: string): Promise<void>;
  protected abstract records(): AsyncIterable<[string, Found<T>]>;
  /** Deletes each record whose text as kept is `doomed`, unless written anew meanwhile; each text is read once. */
  protected abstract deleteTexts(doomed: (text: string) => boolean): Promise<number>;
  protected abstract holderOf(key: string): Promise<string | null | undefined>;
  protected abstract takeOrphans(): Promise<StateEntry<T>[]>;
  /** The key of every record, unreadable ones too: a full scan, never on a hot path. */
  abstract keys(): AsyncIterable<string>;

  /**
   * A claim is a record of its token, so a key stays taken across a restart. An unreadable record is a claim too, as
   * for Redis's SET NX: taking it anew would pay a replayed request's job twice.
   */
  protected async takeOnce(key: string, token: string): Promise<boolean> {
    let taken = false;
    await this.changeRecord(key, (found) => {
      taken = found === undefined;
      return taken ? { kept: JSON.stringify(token), hold: false } : undefined;
    });
    return taken;
  }

  protected async giveBackOnce(key: string, token: string): Promise<void> {
    await this.changeRecord(key, (found) => (found === token ? { kept: undefined, hold: undefined } : undefined));
  }

  /** The process holding the record when it is another live one (the data folder's: none, one process per folder). */
  protected async holderElsewhere(_key: string): Promise<string | undefined> {
    return undefined;
  }

  /** The record, or undefined when there is none — or when it is damaged (see `read`); a failing read throws. */
  async get(key: string): Promise<T | undefined> {
    return readable(await this.read(key));
  }

  /** As `get`, but a damaged record is `UNREADABLE`, for a reader that must not take it for none; a failing read throws. */
  async read(key: string): Promise<Found<T>> {
    this.assertOpen();
    return STATE_KEY_PATTERN.test(key) ? this.readRecord(key) : undefined;
  }

  /**
   * Whether a record (readable or not) is kept under the key, without reading its value. A record removed behind the
   * store is not, and `has` or `read` finding it gone drops it from the space's index and bounds.
   */
  async has(key: string): Promise<boolean> {
    this.assertOpen();
    return STATE_KEY_PATTERN.test(key) && this.hasRecord(key);
  }

  async put(key: string, value: T, options: PutOptions = {}): Promise<void> {
    this.assertOpen();
    checkKey(key);
    await this.putRecord(key, encodeValue(this.definition, value), this.definition.binary ? undefined : options.hold);
  }

  /**
   * Changes a record atomically for every process: `change` gets the record (or undefined) and answers its new value
   * (undefined deletes it); it may run more than once, so it must not act outside. Answers the value before and after.
   */
  async update<O extends UpdateOptions<T> = UpdateOptions<T>>(key: string, change: (current: UpdateCurrent<T, O>) => T | undefined, options?: O): Promise<{ before: UpdateCurrent<T, O>; after: T | undefined }> {
    this.#usable('update');
    checkKey(key);
    let done!: { before: UpdateCurrent<T, O>; after: T | undefined };
    await this.changeRecord(key, (found) => {
      const before = (found === UNREADABLE && !options?.unreadable ? undefined : found) as UpdateCurrent<T, O>;
      // `change` gets a copy of its own (it may keep or change it).
      const after = change(before === UNREADABLE ? before : structuredClone(before));
      done = { before, after };
      // Asked again on each write tried again (another process wrote the record): `hold` must not act outside either.
      const hold = typeof options?.hold === 'function' ? (after === undefined ? undefined : options.hold(after)) : options?.hold;
      return { kept: after === undefined ? undefined : (encodeValue(this.definition, after) as string), hold };
    });
    return done;
  }

  async delete(key: string): Promise<void> {
    this.assertOpen();
    if (STATE_KEY_PATTERN.test(key)) await this.deleteRecord(key);
  }

  /** Every record that is an object (a full scan: `forget`, upgrades); another value (`null`: a hand edit) is skipped. */
  async *entries(): AsyncIterable<StateEntry<T>> {
    this.assertOpen();
    for await (const [key, found] of this.records()) {
      const value = readable(found);
      if (typeof value === 'object' && value !== null) yield { key, value };
    }
  }

  /** Deletes each damaged record (not JSON) whose text `mentions`, unless written anew meanwhile (`forget`). */
  async deleteDamaged(mentions: (text: string) => boolean): Promise<number> {
    this.#usable('deleteDamaged');
    return this.deleteTexts((text) => safeJson(text) === undefined && mentions(text));
  }

  /** Takes the records whose holder's lease lapsed, each for one process, which holds it until it releases it. */
  async claimOrphans(): Promise<StateEntry<T>[]> {
    this.assertOpen();
    // A binary space's records are never held.
    return this.definition.binary ? [] : this.takeOrphans();
  }

  /** Whether another live process holds the record (its job runs there, not here). */
  async heldElsewhere(key: string): Promise<boolean> {
    return STATE_KEY_PATTERN.test(key) && (await this.holderElsewhere(key)) !== undefined;
  }

  /** Whether this process holds the record. */
  async heldHere(key: string): Promise<boolean> {
    this.assertOpen();
    return STATE_KEY_PATTERN.test(key) && (await this.holderOf(key)) === this.owner;
  }

  /** Takes a key once: true for the first call across processes and restarts within the TTL; keeps `token` for `releaseClaim`. */
  async claimOnce(key: string, token?: string): Promise<boolean> {
    this.#usable('claimOnce');
    const kept = claimToken(token);
    return STATE_KEY_PATTERN.test(key) && this.takeOnce(key, kept);
  }

  /**
   * Gives back a key the `claimOnce` with this `token` took (its answer came too late: `claimWithin`). A key taken by
   * another claim since stays taken: a release sent again late never frees another's claim.
   */
  async releaseClaim(key: string, token: string): Promise<void> {
    this.#usable('releaseClaim');
    const kept = claimToken(token);
    if (STATE_KEY_PATTERN.test(key)) await this.giveBackOnce(key, kept);
  }

  /** Sends a notice to the live process holding the record (another replica): true when it received it (none: one process). */
  async notifyHolder(_key: string, _notice: Notice): Promise<boolean> {
    return false;
  }

  /** Receives the notices other processes send about the records this process holds (one handler per space; none: one process). */
  async onNotice(_handler: (key: string, notice: Notice) => void): Promise<void> {}

  /** Open, and (`update`, `claimOnce` … are for JSON records) not a binary space, whose bytes are only put, read and deleted. */
  #usable(what: string): void {
    this.assertOpen();
    if (this.definition.binary) throw new TypeError(`the ${this.definition.name} space keeps bytes: no ${what} there`);
  }
}

/** A process id no other process (here or on another host, now or later) has: host, pid and a random part. */
export function newOwnerId(): string {
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '').slice(0, 40) || 'host';
  return `${host}.${process.pid}.${randomBytes(4).toString('hex')}`;
}
