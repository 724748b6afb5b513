import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { endToRecord, isRunning, keepsNoEnd, releaseWhenDone, type BotState, type Space, type StatusWords } from '../state/index.js';
import { JobEndSchema, type JobEnd } from '../runner/job-history.js';
import { OwedWrites } from '../runner/owed-writes.js';
import { BACKGROUNDS, LIMITS, MODERATIONS, OUTPUT_FORMATS, QUALITIES, SIZES, type LoggerLike } from 'pictor';
import { silentLogger } from 'pictor/internal';

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
  format: z.enum(OUTPUT_FORMATS),
  cost: z.object({ perImageUsd: z.number(), totalUsd: z.number(), n: z.number(), basis: z.enum(['table', 'estimate']), reason: z.string().optional() }),
  elapsedMs: z.number(),
  images: z.number(),
  where: z.enum(['channel', 'thread', 'dm']).optional(),
});

const RequestStatusSchema = z.enum(['active', 'ended']);

/** A request's status words, each one the release rule names a phase for (`StatusWords`: another fails to compile, as on Discord). */
export type RequestStatus = StatusWords<z.output<typeof RequestStatusSchema>>;

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
  /** The runner's job (the ledger's job id): a sweep finds what the ledger charged a job a stop cut off by it. */
  runnerJobId: z.string().max(100).optional(),
  /** The language of the job's messages (the requester's); English for requests saved before it was kept. */
  locale: z.string().max(35).optional(),
  /** `active` from submission until the message shows the job's end; a crash leaves it `active` (see the start-up sweep). */
  status: RequestStatusSchema.optional(),
  /**
   * The job's end was recorded (the runner's `recordEnded`: the member's history and the audit channel), saved as the
   * runner records it; a request the sweep shows done without it (a crash before its end) has its end recorded there.
   */
  endRecorded: z.literal(true).optional(),
  /**
   * The end the runner is to record, saved by the live view with `ended` once the job's message shows it, until
   * `endRecorded`: the request stays held by its process meanwhile, and one a stop left so is claimed by the next sweep,
   * which records this end (and shows nothing).
   */
  end: JobEndSchema.optional(),
  /** Shown only to its requester: `channelId` is their direct messages with the bot, `askedIn` the channel they asked in (whose rules apply to its Reroll and Edit). */
  private: z.literal(true).optional(),
  askedIn: z.string().optional(),
  /**
   * The Workflow Builder step the job runs for, until that step is ended: its execution and the token Slack gave for it
   * (a secret: never logged; taken out when the step is ended, and by a forget once the job has ended). The request
   * stays held while it keeps a step, its job done or not, so a sweep ends a step a crash left open (`takeStep`).
   */
  step: z.object({ executionId: z.string().max(100), token: z.string().max(500) }).optional(),
});

export type SavedRequest = z.output<typeof SavedRequestSchema>;
export type NewRequest = Omit<SavedRequest, 'version' | 'id' | 'createdAt' | 'outputFiles' | 'inputFiles' | 'previewFiles' | 'result' | 'actionsMessage' | 'endRecorded' | 'end'> &
  Partial<Pick<SavedRequest, 'inputFiles' | 'outputFiles'>>;

const ID_PATTERN = /^[A-Za-z0-9_-]{16}$/;
type RequestPatch = Partial<Pick<SavedRequest, 'messageTs' | 'actionsMessage' | 'outputFiles' | 'previewFiles' | 'result' | 'threadTs' | 'status' | 'endRecorded' | 'end'>>;


/**
 * The Slack requests, in the bots' state (the `slack-requests` space: one file
 * per request in the data folder, or Redis). A request is held by the process
 * running its job from submission until its message shows the end and the
 * runner recorded that end (`endRecorded`), whichever comes last; if that
 * process dies, a surviving one (or the next start) claims it and marks it
 * interrupted, or shows its end, or records it. Ids are random and checked before they touch a path or a key,
 * since they come back in button values.
 */
export class RequestStore {
  readonly space: Space<SavedRequest>;
  /** Ends the state refused (`markEnded`), by their request's id: written again until written; a stop pays them (`payWithin`). */
  readonly owed: OwedWrites;

  constructor(state: BotState, logger: LoggerLike = silentLogger()) {
    this.space = state.store.space<SavedRequest>(state.spaces.slackRequests);
    this.owed = new OwedWrites(logger, () => state.store.closing);
  }

  /**
   * Takes the requests whose job ran in a process that is gone (at start: the
   * last one; with Redis: also a replica whose lease lapsed). Each is handed to
   * one process only: the active ones, and the ended ones whose end is still to
   * be recorded (`endToRecord`); any other ended one is simply released (one an
   * older version ended is not held: nothing is left to do of it). Oldest first.
   */
  async claimInterrupted(): Promise<SavedRequest[]> {
    const found: SavedRequest[] = [];
    for (const { key, value } of await this.space.claimOrphans()) {
      const request = SavedRequestSchema.safeParse(value);
      if (request.success && (isRunning(request.data) || endToRecord(request.data) || request.data.step)) found.push(request.data);
      // Released as it is now, not written back from the copy claimed: a request forgotten meanwhile stays deleted.
      else if (request.success) await this.space.update(key, (current) => current, { hold: false });
      else await this.space.delete(key);
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
    await this.space.put(record.id, record, { hold: isRunning(record) });
    return record;
  }

  /** The record, or undefined when the id is malformed, unknown or unreadable. */
  async get(id: string): Promise<SavedRequest | undefined> {
    if (!ID_PATTERN.test(id)) return undefined;
    try {
      const parsed = SavedRequestSchema.safeParse(await this.space.get(id));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Changes a request (atomically for every process); undefined when it is unknown. A request ended with nothing left
   * to do of it — its end shown, and recorded or without an end to record — is released: nobody has to sweep it any
   * more. The view's mark (`ended` with its `end`) and the runner's (`endRecorded`) come in either order, each not
   * knowing the other's: whichever makes the request so releases it, decided from the request as changed, in its one
   * write. A recorded end is not kept once the job no longer runs (`keepsNoEnd`, the rule of Discord's records too).
   */
  async update(id: string, patch: RequestPatch): Promise<SavedRequest | undefined> {
    if (!ID_PATTERN.test(id)) return undefined;
    const change = (current: SavedRequest | undefined) => {
      const parsed = SavedRequestSchema.safeParse(current);
      if (!parsed.success) return undefined;
      const changed = SavedRequestSchema.parse({ ...parsed.data, ...patch });
      if (keepsNoEnd(changed)) delete changed.end;
      return changed;
    };
    return (await this.space.update(id, change, { hold: releasedWhenDone })).after;
  }

  /**
   * A request's end, once its message shows it (with the `end` the runner is to record): when the state refuses it (a
   * full Redis, a full disk) it is thrown, and owed — kept in this process and written again, with longer pauses, until
   * the state takes it, a stop waiting for it within its drain (`owed.payWithin`). The request stays held by this process
   * meanwhile; only a stop or a crash before it is written leaves it to a sweep, which says the job stopped.
   */
  async markEnded(id: string, end: JobEnd | undefined): Promise<void> {
    await this.owed.writeOrOwe(id, () => this.update(id, { status: 'ended', end }));
  }

  /**
   * Takes the request's Workflow Builder step out of it, atomically for every process: whoever gets it ends the step,
   * once (a sweep run again, or on another process, gets nothing). Undefined when the request has none (any more).
   */
  async takeStep(id: string): Promise<SavedRequest['step']> {
    if (!ID_PATTERN.test(id)) return undefined;
    const { before } = await this.space.update(
      id,
      (current) => {
        if (current?.step === undefined) return current;
        const { step: _, ...rest } = current;
        return rest;
      },
      { hold: releasedWhenDone },
    );
    return before?.step;
  }

  /** Forgets a request (one the runner refused: it has no message and no buttons). */
  async delete(id: string): Promise<void> {
    if (ID_PATTERN.test(id)) await this.space.delete(id);
  }
}

/** A request's hold once a write changed it: released when it is done and keeps no Workflow Builder step to end. */
function releasedWhenDone(request: SavedRequest): false | undefined {
  return request.step === undefined ? releaseWhenDone(request) : undefined;
}
