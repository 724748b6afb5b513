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

/** What `Space.read` answers for a record kept but unreadable: not JSON (damaged), or a failing read (permissions, disk). */
export const UNREADABLE: unique symbol = Symbol('unreadable record');

export interface Space<T> {
  readonly definition: SpaceDefinition;
  /** The record, or undefined when there is none — or when it cannot be read (see `read`). */
  get(key: string): Promise<T | undefined>;
  /** As `get`, but a record that cannot be read is `UNREADABLE`, for a reader that must not take it for none. */
  read(key: string): Promise<T | typeof UNREADABLE | undefined>;
  /**
   * Whether a record (readable or not) is kept under the key, without reading its value. A record removed behind the
   * store is not, and `has` or `read` finding it gone drops it from the space's index and bounds.
   */
  has(key: string): Promise<boolean>;
  put(key: string, value: T, options?: PutOptions): Promise<void>;
  /**
   * Changes a record atomically for every process: `change` gets the record (or undefined) and answers its new value
   * (undefined deletes it); it may run more than once, so it must not act outside. Answers the value before and after.
   */
  update<O extends UpdateOptions<T> = UpdateOptions<T>>(key: string, change: (current: UpdateCurrent<T, O>) => T | undefined, options?: O): Promise<{ before: UpdateCurrent<T, O>; after: T | undefined }>;
  delete(key: string): Promise<void>;
  /** Every record that is an object (a full scan: `forget`, upgrades); another value (`null`: a hand edit) is skipped. */
  entries(): AsyncIterable<StateEntry<T>>;
  /** Deletes each damaged record (not JSON) whose text `mentions`, unless written anew meanwhile (`forget`). */
  deleteDamaged(mentions: (text: string) => boolean): Promise<number>;
  /** The key of every record, unreadable ones too: a full scan, never on a hot path. */
  keys(): AsyncIterable<string>;
  /** Takes the records whose holder's lease lapsed, each for one process, which holds it until it releases it. */
  claimOrphans(): Promise<StateEntry<T>[]>;
  /** Whether another live process holds the record (its job runs there, not here). */
  heldElsewhere(key: string): Promise<boolean>;
  /** Whether this process holds the record. */
  heldHere(key: string): Promise<boolean>;
  /** Takes a key once: true for the first call across processes and restarts within the TTL; keeps `token` for `releaseClaim`. */
  claimOnce(key: string, token?: string): Promise<boolean>;
  /**
   * Gives back a key the `claimOnce` with this `token` took (its answer came too late: `claimWithin`). A key taken by
   * another claim since stays taken: a release sent again late never frees another's claim.
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
  /** Removes the temporary files writes a crash stopped left (a record's whole version): for `forget`. */
  removeLeftovers(): Promise<void>;
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
