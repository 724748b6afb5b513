import { MAX_KEPT_IMAGE_BYTES } from './spaces.js';

/**
 * When a job's record (a Discord job record, a Slack request) may be let go: one rule for the stores' writes, their
 * sweeps and `forget`. A record is held by the process running its job while the job runs, and once it ended while
 * its end is still to be recorded (the runner's history and audit entries); then nothing is left to do of it.
 *
 * The surfaces name a record's status in their own words; each word names one phase here, the same on both:
 * `running` (Discord's pending and running, Slack's active), `ended` (Discord's completed, failed, cancelled and
 * refused, Slack's ended), and `other` for the rest (a Discord draft, a request an older version kept without a status).
 * Each store declares its words as this table's (`StatusWords<…>`: Discord's `JobRecordStatus`, Slack's `RequestStatus`):
 * a word it does not name fails to compile, the same on both.
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

/** A store's status words, each one this rule names a phase for (`StatusWords<'pending' | …>`; another fails to compile). */
export type StatusWords<Word extends StatusWord> = Word;

/** What the rule reads of a record: its status word, the end its process is to record, and whether it was. */
export interface JobRecordState<End> {
  status?: string | undefined;
  end?: End | undefined;
  endRecorded?: boolean | undefined;
}

/** The phase a record's status word names (`other` for a word neither surface gives a job that ran). */
export function phaseOf(record: Pick<JobRecordState<unknown>, 'status'>): JobPhase {
  return record.status !== undefined && Object.hasOwn(PHASES, record.status) ? PHASES[record.status as StatusWord] : 'other';
}

/** Whether its job is still running (its process holds it; its buttons and a sweep need it). */
export function isRunning(record: Pick<JobRecordState<unknown>, 'status'>): boolean {
  return phaseOf(record) === 'running';
}

/**
 * An ended record's end, while it is still to be recorded (its view marked it, the runner has not recorded it yet):
 * what a sweep records when the process holding it stopped first. A record that has not ended has none to record.
 */
export function endToRecord<End>(record: JobRecordState<End>): End | undefined {
  return phaseOf(record) === 'ended' ? endNotRecorded(record) : undefined;
}

/** An ended record with nothing left to do of it: its end recorded, or none to record. */
export function isDone(record: JobRecordState<unknown>): boolean {
  return phaseOf(record) === 'ended' && endNotRecorded(record) === undefined;
}

/**
 * Whether a write leaves a record without its end (and what else its sweep would show it from): once the end is
 * recorded and its job no longer runs, nothing is left to do with it. A record still running keeps them: its sweep
 * shows its end from them.
 */
export function keepsNoEnd(record: JobRecordState<unknown>): boolean {
  return record.endRecorded === true && !isRunning(record);
}

/** A record's end unless it is marked recorded, whatever its phase (`endToRecord` and `isDone` ask the phase, once). */
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
 * Which of a job's images are kept for its buttons, the one rule — the store's (`add`, `saveOutputs`) and the upgrade
 * from 0.1's: none over the kept images' bound (`tooLarge`, their indices), none not there (undefined: not read), none
 * `usable` refuses; each with its index among the images given, so an output keeps its number in its job whatever is
 * left out; an edit's inputs all or none (its Reroll needs every one).
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

/** Whether a job's prompt was erased by its member's forget (`forgetJobRecord` keeps a record without it): nothing is left to send again. */
export function promptErased(record: { prompt: string }): boolean {
  return record.prompt === '';
}
