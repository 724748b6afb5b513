import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

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
  /**
   * The values are bytes (a Buffer), kept as they are — no JSON, no base64 — so a process never holds more than the
   * bytes themselves while it writes or reads one (the kept images). Such records are never held (`hold` is ignored),
   * changed in place (`update`) or taken once (`claimOnce`, `releaseClaim`).
   */
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
  /**
   * As `PutOptions.hold`, or decided from the value `change` answered, in the same write: `(after) => true | false |
   * undefined` (not asked when the record is deleted; asked again with each try's value when the write is tried again).
   */
  hold?: boolean | ((after: T) => boolean | undefined) | undefined;
  /** true: a record that is kept and cannot be read reaches `change` as `UNREADABLE`, not as undefined (none). */
  unreadable?: boolean | undefined;
}

/** What `update`'s `hold` option asks for a record changed into `after` (undefined: deleted). */
export function holdAfter<T>(hold: UpdateOptions<T>['hold'], after: T | undefined): boolean | undefined {
  return typeof hold === 'function' ? (after === undefined ? undefined : hold(after)) : hold;
}

/** What `update`'s `change` gets: the record or undefined, and `UNREADABLE` too when the options ask for it. */
export type UpdateCurrent<T, O extends UpdateOptions<T>> = T | undefined | (O extends { unreadable: true } ? typeof UNREADABLE : never);

export interface StateEntry<T> {
  key: string;
  value: T;
}

/**
 * What `Space.read` answers for a record that is kept but cannot be read: its text is not JSON (damaged), or its file
 * cannot be read (permissions, a disk error).
 */
export const UNREADABLE: unique symbol = Symbol('unreadable record');

export interface Space<T> {
  readonly definition: SpaceDefinition;
  /** The record, or undefined when there is none — or when it cannot be read (see `read`). */
  get(key: string): Promise<T | undefined>;
  /** As `get`, but a record that cannot be read is `UNREADABLE`: for a reader that must not take it for none (a restriction it held would drop). */
  read(key: string): Promise<T | typeof UNREADABLE | undefined>;
  /**
   * Whether a record is kept under the key — one that cannot be read too (`read` answers it `UNREADABLE`) — without
   * reading its value: the data folder's index and a stat of its file, Redis's EXISTS. A record removed behind the
   * store (a file deleted by hand or lost, a key deleted) is not kept, as `read` finds none, and whichever of the two
   * finds it gone drops it from the space's index: `keys` no longer lists it, and it no longer counts toward `maxCount`
   * or `maxBytes`. For a caller that lists what is kept (the console's thumbnails).
   */
  has(key: string): Promise<boolean>;
  put(key: string, value: T, options?: PutOptions): Promise<void>;
  /**
   * Changes a record atomically for every process sharing the backend: `change` gets the record (or undefined) and
   * answers its new value (undefined deletes it). `change` may run more than once (when another process wrote the
   * record meanwhile), so it must not act outside. Answers the value before and after. A record that is kept and
   * cannot be read (as `read` tells) reaches `change` as undefined, like a missing one, unless asked for with
   * `{ unreadable: true }`: then `change` (and `before`) get `UNREADABLE`, read in the same step as the write.
   * `hold` may be decided from the value `change` answered (`(after) => …`): the record is changed and held or released
   * in one write.
   */
  update<O extends UpdateOptions<T> = UpdateOptions<T>>(key: string, change: (current: UpdateCurrent<T, O>) => T | undefined, options?: O): Promise<{ before: UpdateCurrent<T, O>; after: T | undefined }>;
  delete(key: string): Promise<void>;
  /** Every record (for `forget` and upgrades: a full scan), an object (bytes too); another value (`null`: a hand edit) is skipped as damaged. */
  entries(): AsyncIterable<StateEntry<T>>;
  /** Deletes each damaged record (not JSON) whose text `mentions` (for `forget`: whose it is cannot be read), unless written anew meanwhile. */
  deleteDamaged(mentions: (text: string) => boolean): Promise<number>;
  /** The key of every record, one that cannot be read (`UNREADABLE`) too, which `entries` skips: a full scan, never on a hot path. */
  keys(): AsyncIterable<string>;
  /**
   * Takes the records whose holder's lease has lapsed: each is returned to one process only, which then holds it
   * until it releases it (`put` or `update` with `{ hold: false }`, or `delete`).
   */
  claimOrphans(): Promise<StateEntry<T>[]>;
  /** Whether another live process holds the record (its job runs there, not here). */
  heldElsewhere(key: string): Promise<boolean>;
  /** Whether this process holds the record (it took it with a write that held it, or claimed it, and released it not since). */
  heldHere(key: string): Promise<boolean>;
  /**
   * Takes a key once: true for the first call across every process and restart within the space's TTL, false after.
   * The claim keeps `token` (`CLAIM_TOKEN_PATTERN`; a random one when absent): only a release naming it gives it back.
   */
  claimOnce(key: string, token?: string): Promise<boolean>;
  /**
   * Gives back a key the `claimOnce` with this `token` took, so the next `claimOnce` of it answers true again: for a
   * claim whose answer came too late to be used (`claimWithin`), so the request refused meanwhile can be taken when it
   * comes again. A key held by another claim (given back and taken again since, by any process) stays taken: a release
   * sent again late (a Redis link that reconnects sends again what went unanswered) never frees another's claim.
   */
  releaseClaim(key: string, token: string): Promise<void>;
  /** Sends a notice to the live process holding the record (another replica): true when it received it. */
  notifyHolder(key: string, notice: Notice): Promise<boolean>;
  /** Receives the notices other processes send about the records this process holds (one handler per space). */
  onNotice(handler: (key: string, notice: Notice) => void): Promise<void>;
}

/** A small message between processes about one record (at most `MAX_NOTICE_BYTES` as JSON). */
export type Notice = Record<string, unknown>;
export const MAX_NOTICE_BYTES = 4096;

export interface StateStore {
  /** This process's id: the holder of the records of the jobs it runs. */
  readonly owner: string;
  /** How long a holder's lease lasts without renewal (file backend: for ever, one process per data folder). */
  readonly leaseMs: number;
  space<T>(definition: SpaceDefinition): Space<T>;
  /** Removes the temporary files writes a crash stopped left in the spaces opened (a record's whole version): for `forget`. */
  removeLeftovers(): Promise<void>;
  /**
   * Stops renewing the lease and gives it back: what this process still holds is claimed by others at once. The
   * data folder's store also resolves only once the writes under way have ended, and refuses every call after
   * (`StateClosedError`): a stopped bot writes nothing more into its folder, whatever it gave up waiting for.
   * `until` (a time as `Date.now()`): a wait on Redis ends by then at the latest (the lease then lapses on its own).
   */
  close(options?: { until?: number | undefined }): Promise<void>;
}

/** A call on the bots' state after it was closed (a job the stop gave up on, ending late): nothing is read or written. */
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
export function claimToken(token: string | undefined): string {
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

export function checkKey(key: string): void {
  if (!STATE_KEY_PATTERN.test(key)) throw new Error(`not a state key: ${JSON.stringify(key.slice(0, 80))}`);
}

/** A value as it is kept: JSON, or a binary space's Buffer itself (never empty); either checked against the bound. */
export function encodeValue(definition: SpaceDefinition, value: unknown): string | Buffer {
  if (definition.binary && (!Buffer.isBuffer(value) || value.length === 0)) throw new TypeError(`the ${definition.name} space keeps bytes (a Buffer, not empty)`);
  const kept = definition.binary ? (value as Buffer) : JSON.stringify(value);
  const bytes = Buffer.byteLength(kept);
  if (bytes > definition.maxValueBytes) throw new StateValueTooLargeError(definition.name, bytes, definition.maxValueBytes);
  return kept;
}

/** `update`, `claimOnce` and `releaseClaim` are for JSON records: a binary space's bytes are only put, read and deleted. */
export function refuseBytes(definition: SpaceDefinition, what: string): void {
  if (definition.binary) throw new TypeError(`the ${definition.name} space keeps bytes: no ${what} there`);
}

/** What `entries` yields: a value kept as an object (see `Space.entries`). */
export const isRecordValue = <T>(value: T | undefined): value is T => typeof value === 'object' && value !== null;

/** What `get` answers for what `read` found: a record that cannot be read counts as none. */
export function readable<T>(found: T | typeof UNREADABLE): T | undefined {
  return found === UNREADABLE ? undefined : found;
}

/** A process id no other process (here or on another host, now or later) has: host, pid and a random part. */
export function newOwnerId(): string {
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '').slice(0, 40) || 'host';
  return `${host}.${process.pid}.${randomBytes(4).toString('hex')}`;
}
