import { MAX_KEPT_IMAGE_BYTES } from './spaces.js';

/**
 * When a job's record (a Discord job record, a Slack request) may be let go, one rule for the stores, their sweeps and
 * `forget`: it is held by its job's process while the job runs, and once ended while its end is still to be recorded.
 * Each surface's status words name one phase here (`StatusWords<…>`: a word not in the table fails to compile).
 */
export type JobPhase = 'running' | 'ended' | 'other';

const PHASES = {
  draft: 'other',
  pending: 'running',
  running: 'running',
  active: 'running',
  completed: 'ended',
  failed: 'ended',
  cancelled: 'ended',
  refused: 'ended',
  ended: 'ended',
} as const satisfies Record<string, JobPhase>;

/** A status word this rule names a phase for. */
export type StatusWord = keyof typeof PHASES;

/** A store's status words, each one this rule names a phase for. */
export type StatusWords<Word extends StatusWord> = Word;

/** What the rule reads of a record: its status word, the end its process is to record, and whether it was. */
export interface JobRecordState<End> {
  status?: string | undefined;
  end?: End | undefined;
  endRecorded?: boolean | undefined;
}

/** The phase a record's status word names. */
export function phaseOf(record: Pick<JobRecordState<unknown>, 'status'>): JobPhase {
  return record.status !== undefined && Object.hasOwn(PHASES, record.status) ? PHASES[record.status as StatusWord] : 'other';
}

/** Whether its job is still running (its process holds it; its buttons and a sweep need it). */
export function isRunning(record: Pick<JobRecordState<unknown>, 'status'>): boolean {
  return phaseOf(record) === 'running';
}

/** An ended record's end while it is still to be recorded: what a sweep records when its process stopped first. */
export function endToRecord<End>(record: JobRecordState<End>): End | undefined {
  return phaseOf(record) === 'ended' ? endNotRecorded(record) : undefined;
}

/** An ended record with nothing left to do of it: its end recorded, or none to record. */
export function isDone(record: JobRecordState<unknown>): boolean {
  return phaseOf(record) === 'ended' && endNotRecorded(record) === undefined;
}

/** Whether a write leaves a record without its end (and what its sweep would show): recorded, and no longer running. */
export function keepsNoEnd(record: JobRecordState<unknown>): boolean {
  return record.endRecorded === true && !isRunning(record);
}

function endNotRecorded<End>(record: JobRecordState<End>): End | undefined {
  return record.endRecorded === true ? undefined : record.end;
}

/** A record's hold once a write changed it: released when it is done, else as it was (a space's `hold` option). */
export function releaseWhenDone(record: JobRecordState<unknown>): false | undefined {
  return isDone(record) ? false : undefined;
}

/** Most drafts of Discord's "Edit image" menu a member keeps: past it, the oldest go. */
const DRAFTS_KEPT = 10;

/** A member's list of drafts with `draft` added: listed once by its key (a draft written again moves last), the newest `DRAFTS_KEPT`. */
export function withDraft<D extends { key: string }>(own: readonly D[] | undefined, draft: D): D[] {
  return [...(own ?? []).filter((d) => d.key !== draft.key), draft].slice(-DRAFTS_KEPT);
}

/**
 * Which of a job's images are kept for its buttons, one rule for the store and the 0.1 upgrade: none over the bound
 * (`tooLarge`), missing or refused by `usable`; each with its index among those given; an edit's inputs all or none.
 */
export function imagesToKeep<T extends { data: Buffer }>(
  kind: 'in' | 'out',
  images: readonly (T | undefined)[],
  usable: (image: T) => boolean = () => true,
): { kept: { image: T; index: number }[]; tooLarge: number[] } {
  const tooLarge = images.flatMap((image, index) => (image && image.data.length > MAX_KEPT_IMAGE_BYTES ? [index] : []));
  const kept = images.flatMap((image, index) => (image && !tooLarge.includes(index) && usable(image) ? [{ image, index }] : []));
  return { kept: kind === 'in' && kept.length < images.length ? [] : kept, tooLarge };
}

/** Whether a job's prompt was erased by its member's forget: nothing is left to send again. */
export function promptErased(record: { prompt: string }): boolean {
  return record.prompt === '';
}
