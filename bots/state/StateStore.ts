import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

/**
 * The bots' state after the moment a job or a button was made: what a later
 * button press, a restart or another replica needs. One interface, two
 * backends: the data folder (`FileStateStore`, one process) and Redis
 * (`RedisStateStore`, any number of processes sharing `REDIS_URL`).
 *
 * Records live in spaces (one per kind of record). Every space states its
 * bounds: records expire `ttlMs` after their last write, and a value larger
 * than `maxValueBytes` is refused. A record may be *held* by the process that
 * runs its job; a process holds through a lease it renews while it lives.
 * When a holder's lease lapses (it died), `claimOrphans` hands each of its
 * records to exactly one surviving process, which shows the job interrupted
 * and releases it.
 */
export interface SpaceDefinition {
  /** Names the space in Redis keys: letters, digits and `-`. */
  name: string;
  /** The space's folder in the data folder (file backend), e.g. `slack/requests`. */
  dir: string;
  /** A record is dropped this long after its last write. */
  ttlMs: number;
  /** A larger record is refused (StateValueTooLargeError). */
  maxValueBytes: number;
}

export interface PutOptions {
  /** true: this process holds the record (its job runs here); false: no process does; absent: unchanged. */
  hold?: boolean | undefined;
}

export interface StateEntry<T> {
  key: string;
  value: T;
}

export interface Space<T> {
  readonly definition: SpaceDefinition;
  /** Makes the space ready (its folder, a first prune); the other calls do it too when needed. */
  open(): Promise<void>;
  get(key: string): Promise<T | undefined>;
  put(key: string, value: T, options?: PutOptions): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Takes the records whose holder's lease has lapsed: each is returned to one
   * process only, which then holds it (so if it dies too, another takes it
   * over) until it releases it with `put(…, { hold: false })` or `delete`.
   */
  claimOrphans(): Promise<StateEntry<T>[]>;
  /** Whether another process that is alive holds the record (its job runs there, not here). */
  heldElsewhere(key: string): Promise<boolean>;
  /**
   * Takes a key once: true for the first call across every process sharing the
   * backend within the space's TTL, false after (a replayed request). The file
   * backend remembers in memory (one process per data folder).
   */
  claimOnce(key: string): Promise<boolean>;
  /**
   * Sends a notice about a record to the live process that holds it (another
   * replica, where its job runs): true when that process received it. False
   * when no other live process holds it, and always with the file backend
   * (one process: its holder is this one).
   */
  notifyHolder(key: string, notice: Notice): Promise<boolean>;
  /** Receives the notices other processes send about the records this process holds (one handler per space). */
  onNotice(handler: (key: string, notice: Notice) => void): Promise<void>;
}

/** A small message between processes about one record (at most `MAX_NOTICE_BYTES` as JSON). */
export type Notice = Record<string, unknown>;
export const MAX_NOTICE_BYTES = 4096;

export interface StateStore {
  readonly backend: 'file' | 'redis';
  /** This process's id: the holder of the records of the jobs it runs. */
  readonly owner: string;
  /** How long a holder's lease lasts without renewal (file backend: for ever, one process per data folder). */
  readonly leaseMs: number;
  space<T>(definition: SpaceDefinition): Space<T>;
  /** Whether the storage answers (for /healthz). */
  ping(): Promise<boolean>;
  /** Stops renewing the lease and gives it back: what this process still holds is claimed by others at once. */
  close(): Promise<void>;
}

/** A value over its space's bound: a bug or a hostile input, never silently cut. */
export class StateValueTooLargeError extends Error {
  readonly code = 'state_value_too_large';
  constructor(space: string, bytes: number, max: number) {
    super(`a ${space} record of ${bytes} bytes is over the bound of ${max} bytes`);
  }
}

/** Keys come back in button values: only these reach a path or a Redis key. */
export const STATE_KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const SPACE_NAME_PATTERN = /^[a-z0-9-]{1,32}$/;

export function checkSpace(definition: SpaceDefinition): void {
  if (!SPACE_NAME_PATTERN.test(definition.name)) throw new Error(`a state space name must be 1 to 32 of a-z 0-9 -: ${definition.name}`);
  if (!(definition.ttlMs > 0) || !(definition.maxValueBytes > 0)) throw new Error(`the state space ${definition.name} needs a TTL and a size bound`);
}

export function encodeValue(definition: SpaceDefinition, value: unknown): string {
  const text = JSON.stringify(value);
  const bytes = Buffer.byteLength(text);
  if (bytes > definition.maxValueBytes) throw new StateValueTooLargeError(definition.name, bytes, definition.maxValueBytes);
  return text;
}

/** A process id no other process (here or on another host, now or later) has: host, pid and a random part. */
export function newOwnerId(): string {
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '').slice(0, 40) || 'host';
  return `${host}.${process.pid}.${randomBytes(4).toString('hex')}`;
}
