import type { LoggerLike } from 'pictor';
import type { createSerialQueue, QuotaStore } from 'pictor/internal';
import { endToRecord, isRunning } from './job-records.js';
import { stateKeyOf, type BotSpaces } from './spaces.js';
import { StateClosedError, type Space, type SpaceDefinition, type StateStore } from './StateStore.js';

/*
 * What a member's forget erases (README, "What a member's forget erases"): the rule, over the bots' state and the
 * ledgers; `openBotState` gives it as `BotState.forget`.
 */

/** The other ledger's turns: one forget at a time opens it; the one open now, closed by a stop too; the stop's deadline once it began. */
export interface OtherLedgerTurns {
  turn: ReturnType<typeof createSerialQueue>;
  open: Pick<QuotaStore, 'close'> | undefined;
  closing: { until: number | undefined } | undefined;
  /** Logs a failure of the other ledger's close, once: on Redis a forget's close and a stop's are one close, failing alike. */
  closeFailed: (message: string, fields?: Record<string, unknown>) => (error: unknown) => void;
}

/** The ledgers a forget erases prompts from (`OpenBotStateOptions.ledger` and `.otherLedger`). */
export interface ForgetLedgers {
  ledger?: Pick<QuotaStore, 'forgetPrompts'> | undefined;
  otherLedger?: (() => Promise<Pick<QuotaStore, 'forgetPrompts' | 'close'> | undefined>) | undefined;
}

export function closeFailedOnce(logger: LoggerLike): OtherLedgerTurns['closeFailed'] {
  const logged = new WeakSet<object>();
  return (message, fields) => (error) => {
    if (typeof error === 'object' && error !== null) {
      if (logged.has(error)) return;
      logged.add(error);
    }
    logger.warn({ err: error, ...fields }, message);
  };
}

export interface MemberRecord {
  prompt: string;
  status?: string | undefined;
  userId?: string | undefined;
  requester?: { userId: string } | undefined;
  inputs?: { file: string }[] | undefined;
  outputs?: { file: string }[] | undefined;
  runnerJobId?: string | undefined;
  /** The end its process is still to record (a Slack request's, a Discord record's), until `endRecorded`. */
  end?: unknown;
  endRecorded?: boolean | undefined;
}

/** Where a member's job records are kept: the records, and (Discord's) their kept images and the console's links to them. */
export interface MemberRecordSpaces<R extends MemberRecord> {
  records: Space<R>;
  images: Space<unknown>;
  outputsOfJob: Space<unknown>;
}

/**
 * A member's forget of one of their job records, the one rule: `forget`'s for each record it finds, and a surface's
 * for a record written after the forget's scan (a job accepted as its member forgot). A running job's record stays
 * (its buttons and its sweep need it) without its prompt; so does, without its images too, an ended one whose end is
 * still to be recorded (the sweep records it, with no prompt) or that keeps a field its space keeps through a forget
 * (`SpaceDefinition.keptThroughForget`). Any other goes, with its kept images and the console's link to them. Decided
 * on the record as it is written (a job may end, or its end be recorded, after the caller read it).
 */
export async function forgetJobRecord<R extends MemberRecord>(spaces: MemberRecordSpaces<R>, key: string): Promise<void> {
  const ended = (r: R): R => ({ ...r, prompt: '', ...(r.inputs && { inputs: [] }), ...(r.outputs && { outputs: [] }) });
  const keeps = (r: R) => endToRecord(r) !== undefined || (spaces.records.definition.keptThroughForget ?? []).some((field) => Object.hasOwn(r, field));
  const { before } = await spaces.records.update(key, (r) => r && (isRunning(r) ? { ...r, prompt: '' } : keeps(r) ? ended(r) : undefined));
  if (!before || isRunning(before)) return;
  for (const { file } of [...(before.inputs ?? []), ...(before.outputs ?? [])]) await spaces.images.delete(file);
  if (before.runnerJobId) await spaces.outputsOfJob.delete(before.runnerJobId);
}

export async function forgetMember(
  store: StateStore,
  spaces: BotSpaces,
  userKey: string,
  { ledger, otherLedger }: ForgetLedgers,
  otherLedgerTurns: OtherLedgerTurns,
  logger: LoggerLike,
): Promise<number> {
  const [platform, id] = [userKey.slice(0, userKey.indexOf(':')), userKey.slice(userKey.indexOf(':') + 1)];
  const records = { discord: spaces.discordJobs, slack: spaces.slackRequests }[platform];
  // Every step is taken whatever the one before met (logged): all else is erased, then the forget fails.
  const failed: unknown[] = [];
  const attempt = <R>(what: string, step: () => Promise<R>) =>
    step().catch((error: unknown) => void (failed.push(error), logger.error({ err: error, userKey, what }, 'forget could not erase this; it erased the rest')));
  /** Takes the member out of each record of a space that lists them among others (an empty list goes). */
  const eraseFromEach = <V extends object>(definition: SpaceDefinition, names: (value: V, key: string) => boolean, without: (value: V) => V | undefined) =>
    attempt(definition.name, async () => {
      const space = store.space<V>(definition);
      for await (const { key, value } of space.entries()) if (names(value, key)) await space.update(key, (v) => v && without(v));
    });
  if (records) {
    const kept = { records: store.space<MemberRecord>(records), images: store.space(spaces.discordImages), outputsOfJob: store.space(spaces.discordJobOutputs) };
    await attempt(records.name, async () => {
      for await (const { key, value } of kept.records.entries()) await attempt(`${records.name} ${key}`, async () => (value.requester?.userId ?? value.userId) === id && forgetJobRecord(kept, key));
    });
    // A damaged record (not JSON) naming them is never read again (it reads as none), and may hold a prompt of theirs.
    await attempt(`damaged ${records.name}`, () => kept.records.deleteDamaged((text) => text.includes(JSON.stringify(id))));
  }
  if (platform === 'discord') await attempt('drafts', () => store.space(spaces.discordDrafts).delete(id));
  // Who opened the Slack Home lately, by workspace.
  if (platform === 'slack') await eraseFromEach<Record<string, unknown>>(spaces.slackHomeViewers, (v) => Object.hasOwn(v, id), (v) => Object.fromEntries(Object.entries(v).filter(([user]) => user !== id)));
  await attempt('defaults', () => store.space(spaces.memberDefaults).delete(stateKeyOf(userKey)));
  const history = await attempt('history', () => store.space<unknown[]>(spaces.history).update(stateKeyOf(userKey), () => undefined));
  // Each server's/workspace's members with history, after the history: a job ending meanwhile writes its history, then
  // lists its member (and takes them out again when their history is gone by then: `keepInHistory`). A list that is not one (a hand edit) fails every reader of it: it goes.
  const isList = (members: string[], key: string) => Array.isArray(members) || (logger.warn({ key }, 'forget deleted a list of members with history that was not a list'), false);
  await eraseFromEach<string[]>(spaces.historyScopes, (members, key) => !isList(members, key) || members.includes(userKey), (members) => (Array.isArray(members) ? nonEmpty(members.filter((m) => m !== userKey)) : undefined));
  await attempt('ledger', async () => ledger?.forgetPrompts(userKey));
  // What it kept before a switch between the embedded emulator and the real service (PICTOR_BASE_URL).
  // The member's answer waits for its forget, not for its close (on Redis, a rewrite of the append-only file to ask once
  // the running one ends); the next forget's turn does, and so does a stop (by its deadline).
  await attempt(
    'other ledger',
    () =>
      new Promise<void>((forgot, failed) => {
        otherLedgerTurns.turn(async () => {
          // Once a stop began, the other ledger is not opened again (the stop closes what is open, then the state).
          if (otherLedgerTurns.closing) throw new StateClosedError('the other ledger');
          const other = await otherLedger?.();
          otherLedgerTurns.open = other;
          try {
            await other?.forgetPrompts(userKey);
            forgot();
          } finally {
            await other?.close(otherLedgerTurns.closing).catch(otherLedgerTurns.closeFailed('forget could not close the other ledger', { userKey }));
            otherLedgerTurns.open = undefined;
          }
        }).catch(failed);
      }),
  );
  await attempt('leftovers', () => store.removeLeftovers());
  if (failed.length > 0) throw new AggregateError(failed, `forget erased all it could of ${userKey}, but ${failed.length} part(s) failed (logged)`);
  return history?.before?.length ?? 0;
}

const nonEmpty = <T>(list: T[]): T[] | undefined => (list.length > 0 ? list : undefined);
