import { Client, Events, type AutocompleteInteraction, type ButtonInteraction, type Interaction } from 'discord.js';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { answerBudgetOf } from '../../../bots/discord/answer-budget.js';
import { ANSWER_TRIP_MS, AnswerBudget } from '../../../bots/runner/answer-budget.js';
import type { BotContext } from '../../../bots/discord/bot-context.js';
import { suggestStyles } from '../../../bots/discord/commands/job-options.js';
import { encodeCustomId } from '../../../bots/discord/custom-ids.js';
import { DISCORD_LIMITS } from '../../../bots/discord/discord-facts.js';
import { hookInteractionAction } from '../../../bots/discord/interaction-action.js';
import { gatewayIntake, InteractionClaims } from '../../../bots/discord/interaction-claims.js';
import type { JobRecord } from '../../../bots/discord/JobRecordStore.js';
import { createInteractionRouter } from '../../../bots/discord/route-interaction.js';
import { FileQuotaStore, JobRunner, say, type MemberDefaultsStore, type QuotaStore } from '../../../bots/runner/index.js';
import { PictorClient } from '../../../src/index.js';
import { apiMessage, apiUser } from '../../fakes/discord/api-objects.js';
import { autocompletePayload, buttonPayload, type InteractionContext } from '../../fakes/discord/interaction-payloads.js';
import { snowflake } from '../../fakes/discord/snowflake.js';
import { RecordingLogger } from './harness.js';

const EPHEMERAL = 64;
/** When the first answer to an interaction must have left, at the latest, counted from when it was made. */
const ANSWERED_BY_MS = DISCORD_LIMITS.acknowledgeMs - ANSWER_TRIP_MS;

const guildId = '200000000000000001';
const channelId = '300000000000000002';
const user = apiUser({ id: '400000000000000001', username: 'ada' });
const botUser = apiUser({ id: '100000000000000001', username: 'pictor', bot: true });

function place(where: 'guild' | 'dm'): InteractionContext {
  return { place: where, applicationId: botUser.id, guildId, channelId, user: user as InteractionContext['user'], roles: [], permissions: '0', attachmentSizeLimit: 10 * 1024 * 1024, locale: 'en-US', guildLocale: 'en-US', threadParentId: undefined };
}

/** A finished job of Ada's in the server: private when its message is in her DM. */
function jobOf(kind: JobRecord['kind'], isPrivate = false): JobRecord {
  const requester = { platform: 'discord' as const, userId: user.id, channelId, scopeId: guildId };
  const image = { id: 'a', bytes: 10, mimeType: 'image/png' };
  return { key: 'k1', kind, prompt: 'a fox', options: {}, requester, createdAt: Date.now(), status: 'completed', inputs: kind === 'edit' ? [image] : [], outputs: [], ...(isPrivate && { private: true }) } as unknown as JobRecord;
}

/** Never answers: the bots' state (or Discord) stalled. */
const never = <T>() => new Promise<T>(() => undefined);
/** Answers `value` after `ms` of (fake) time. */
const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

interface Scene {
  /** The first answers to the press (its reply, update or follow-up), with when each left. */
  answers: { at: number; content?: string; flags?: number }[];
  request: ReturnType<typeof vi.fn>;
  createdAt: number;
  logger: RecordingLogger;
  done: Promise<void>;
}

/**
 * A press of Reroll, delivered by the gateway to a client of the bot, its claim answered by the state after `claimMs`,
 * its job record read with `store.get` and the other reads as given; the bot's answers recorded as they leave.
 */
function press(where: 'guild' | 'dm', claimMs: number, store: Partial<Record<'get' | 'inputsKept' | 'heldHere' | 'runsElsewhere', () => Promise<unknown>>>, botRest: { get: () => Promise<unknown> } = { get: never }, idMadeAgoMs = 0, runner?: JobRunner, action: 'reroll' | 'cancel' = 'reroll'): Scene {
  const client = new Client({ intents: [] });
  hookInteractionAction(client);
  const request = runner ? vi.fn(runner.request.bind(runner)) : vi.fn();
  const ctx = {
    runner: { request, requestForm: vi.fn(), get: () => undefined, cancel: () => false, history: undefined },
    store: { newKey: () => 'k2', ...store },
    logger: new RecordingLogger(),
    adminRoleIds: [],
    userInstalls: false,
    botRest,
    track: () => undefined,
  } as unknown as BotContext;
  const taken = { claimOnce: () => after(claimMs, true), releaseClaim: async () => undefined, definition: { name: 'discord-interactions', ttlMs: 16 * 60_000 } };
  const intake = gatewayIntake(new InteractionClaims(taken as never, ctx.logger), createInteractionRouter(ctx, new Map()));
  const answers: Scene['answers'] = [];
  let done: Promise<void> = Promise.resolve();
  client.on(Events.InteractionCreate, (interaction: Interaction) => {
    const button = interaction as ButtonInteraction;
    const answer = async (options: unknown) => {
      answers.push({ at: Date.now(), ...(typeof options === 'object' ? (options as object) : {}) });
      return undefined as never;
    };
    vi.spyOn(button, 'reply').mockImplementation(answer);
    vi.spyOn(button, 'deferUpdate').mockImplementation(answer);
    vi.spyOn(button, 'followUp').mockImplementation(answer);
    done = intake(interaction);
  });
  // Its id's time, by this host's clock: `idMadeAgoMs` before it arrives (a host clock ahead of Discord's).
  const createdAt = Date.now() - idMadeAgoMs;
  const message = apiMessage({ id: snowflake(), channelId, guildId: where === 'guild' ? guildId : undefined, authorId: botUser.id, content: 'done', components: [], flags: 0, attachments: [], embeds: [], allowedMentions: {}, interactionId: undefined, createdAt, editedAt: undefined, history: [] }, botUser);
  const payload = buttonPayload({ id: snowflake(createdAt), token: 'token' }, encodeCustomId({ action, key: 'k1' }), message, place(where));
  (client as unknown as { actions: { InteractionCreate: { handle(data: unknown): void } } }).actions.InteractionCreate.handle(payload);
  return { answers, request, createdAt, logger: ctx.logger as RecordingLogger, get done() { return done; } };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the answer budget of an interaction', () => {
  it('is the one it arrived with, else the runner’s budget of Discord’s 3 s counted from the first time it is asked for, the same one every time after', () => {
    const arrived = { id: 'arrived' } as never;
    const given = new AnswerBudget(Date.now() - 1_000, DISCORD_LIMITS.acknowledgeMs);
    expect(answerBudgetOf(arrived, given)).toBe(given);
    expect(answerBudgetOf(arrived)).toBe(given);
    const askedAt = Date.now();
    const gateway = { id: 'gateway' } as never;
    const budget = answerBudgetOf(gateway);
    expect(budget).toBeInstanceOf(AnswerBudget);
    expect(budget.answerBy).toBe(askedAt + 3_000);
    expect(budget.endsAt).toBe(askedAt + 2_500);
    vi.advanceTimersByTime(1_000);
    expect(answerBudgetOf(gateway, new AnswerBudget(Date.now(), 3_000))).toBe(budget);
  });
});

describe('a Reroll pressed while the bots’ state is slow: one deadline for every wait before its first answer', () => {
  it('is answered privately, to press again, before Discord’s 3 s when its claim took most of them and its job record does not come, and no job is sent', async () => {
    const scene = press('guild', 1_400, { get: never });
    await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs);
    await scene.done;
    expect(scene.answers).toHaveLength(1);
    expect(scene.answers[0]!.content).toBe(`⚠️ ${say('en-US', 'error.on_my_side')}`);
    expect(scene.answers[0]!.flags! & EPHEMERAL).toBe(EPHEMERAL);
    expect(scene.answers[0]!.at - scene.createdAt).toBeLessThanOrEqual(ANSWERED_BY_MS);
    expect(scene.request).not.toHaveBeenCalled();
  });

  it('of an edit is answered privately, to press again, before Discord’s 3 s when the look at its kept images does not come, and no job is sent', async () => {
    const scene = press('guild', 1_000, { get: () => after(1_000, jobOf('edit')), inputsKept: never });
    await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs);
    await scene.done;
    expect(scene.answers.map((a) => a.content)).toEqual([`⚠️ ${say('en-US', 'error.on_my_side')}`]);
    expect(scene.answers[0]!.at - scene.createdAt).toBeLessThanOrEqual(ANSWERED_BY_MS);
    expect(scene.request).not.toHaveBeenCalled();
  });

  it('in its member’s DM, of their private server job, is refused privately 2.5 s after it was made at the latest when its claim and record took 2 s and Discord does not say who they are', async () => {
    const scene = press('dm', 1_000, { get: () => after(1_000, jobOf('generate', true)) });
    await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs);
    await scene.done;
    expect(scene.answers.map((a) => a.content)).toEqual([`✋ ${say('en-US', 'discord.button.not_member', { why: 'unknown' })}`]);
    // bots/discord/README.md: the waits before a press's first answer end 2.5 s after it was made at the latest.
    expect(ANSWERED_BY_MS).toBe(2_500);
    expect(scene.answers[0]!.at - scene.createdAt).toBeLessThanOrEqual(2_500);
    expect(scene.request).not.toHaveBeenCalled();
  });

  it('in its member’s DM is refused privately without asking Discord when its claim and record took all of its 2.5 s', async () => {
    const botRest = { get: vi.fn(never) };
    const scene = press('dm', 1_200, { get: () => after(1_300, jobOf('generate', true)) }, botRest);
    await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs);
    await scene.done;
    expect(scene.answers.map((a) => a.content)).toEqual([`✋ ${say('en-US', 'discord.button.not_member', { why: 'unknown' })}`]);
    expect(scene.answers[0]!.at - scene.createdAt).toBeLessThanOrEqual(ANSWERED_BY_MS);
    expect(botRest.get).not.toHaveBeenCalled();
    expect(scene.request).not.toHaveBeenCalled();
  });
});

describe('a Cancel of a job recorded as running, that this process’s runner does not know, while the bots’ state cannot say who holds it', () => {
  /** Ada's job, recorded as answered and running, with no runner job id yet (as while an edit's images download). */
  const running = () => ({ ...jobOf('generate'), status: 'running' }) as unknown as JobRecord;

  it.each([
    { what: 'fails', heldHere: () => Promise.reject(new Error('state unreachable')) },
    { what: 'does not answer in time', heldHere: never },
  ])('is answered privately, to press again, when the look at whether it is held here $what: never taken for a job left by a gone process', async ({ heldHere }) => {
    const runsElsewhere = vi.fn(async () => false);
    const scene = press('guild', 100, { get: async () => running(), heldHere, runsElsewhere }, undefined, 0, undefined, 'cancel');
    await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs);
    await scene.done;
    // One private answer, and no "stopped when the bot restarted" shown for a job that may be starting here.
    expect(scene.answers.map((a) => a.content)).toEqual([`⚠️ ${say('en-US', 'error.on_my_side')}`]);
    expect(scene.answers[0]!.flags! & EPHEMERAL).toBe(EPHEMERAL);
    expect(scene.answers[0]!.at - scene.createdAt).toBeLessThanOrEqual(ANSWERED_BY_MS);
    expect(runsElsewhere).not.toHaveBeenCalled();
    expect(scene.logger.entries.some((e) => e.msg === 'could not read what a press needs; told its member privately')).toBe(true);
  });
});

/**
 * A real runner whose intake reads the member's defaults with `defaults.get` and reserves in a ledger in a fresh data
 * folder, each reservation answered `reserveMs` (fake time) after it was asked; no image service is reachable.
 */
async function runnerOf(defaults: MemberDefaultsStore['get'], reserveMs = 0): Promise<{ runner: JobRunner; ledger: FileQuotaStore }> {
  const ledger = new FileQuotaStore({ dir: await mkdtemp(join(tmpdir(), 'pictor-answer-budget-')) });
  const store = new Proxy(ledger, {
    get: (target, name) => {
      const value = Reflect.get(target, name, target) as unknown;
      if (typeof value !== 'function') return value;
      if (name === 'reserve') return async (...args: unknown[]) => (await after(reserveMs, undefined), (value as (...a: unknown[]) => unknown).apply(target, args));
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  }) as QuotaStore;
  const runner = new JobRunner({
    client: new PictorClient({ baseURL: 'http://127.0.0.1:9', apiKey: 'sk-unused', maxRetries: 0 }),
    store,
    limits: {},
    partialImages: 0,
    memberDefaults: { get: defaults, change: never },
  });
  onTestFinished(async () => {
    await runner.shutdown({ graceMs: 0 });
    await ledger.close();
  });
  return { runner, ledger };
}

describe('a Reroll whose claim took most of Discord’s 3 s, while the runner’s intake is slow', () => {
  it('is refused privately 2.5 s after it arrived at the latest when the member’s defaults do not come: nothing reserved, nothing sent', async () => {
    const { runner, ledger } = await runnerOf(never);
    const scene = press('guild', 1_400, { get: () => after(300, jobOf('generate')) }, { get: never }, 0, runner);
    await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs);
    await scene.done;
    expect(scene.request).toHaveBeenCalledTimes(1);
    expect(scene.answers.map((a) => a.content)).toEqual([`✋ ${say('en-US', 'failure.internal_error')}`]);
    expect(scene.answers[0]!.flags! & EPHEMERAL).toBe(EPHEMERAL);
    expect(scene.answers[0]!.at - scene.createdAt).toBeLessThanOrEqual(ANSWERED_BY_MS);
    expect(runner.activeJobs()).toEqual([]);
    expect(await ledger.activeJobs()).toEqual([]);
  });

  it('is refused privately in time when its reservation comes after the answer was due: the reservation is dropped, none left open', async () => {
    const { runner, ledger } = await runnerOf(async () => ({ defaults: {}, unreadable: [] }), 1_000);
    const scene = press('guild', 1_400, { get: () => after(300, jobOf('generate')) }, { get: never }, 0, runner);
    await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs);
    await scene.done;
    expect(scene.answers.map((a) => a.content)).toEqual([`✋ ${say('en-US', 'failure.internal_error')}`]);
    expect(scene.answers[0]!.at - scene.createdAt).toBeLessThanOrEqual(ANSWERED_BY_MS);
    expect(runner.activeJobs()).toEqual([]);
    await vi.waitFor(async () => expect(await ledger.activeJobs()).toEqual([]));
  });
});

describe('a press whose id’s time is 10 s before it reached the bot (the host’s clock 10 s ahead of Discord’s)', () => {
  it('is claimed and run (its job handed to the runner, which gives its first answer): its deadline counts from when it arrived, not from its id', async () => {
    const arrivedAt = Date.now();
    const scene = press('guild', 100, { get: () => after(100, jobOf('generate')) }, { get: never }, 10_000);
    expect(arrivedAt - scene.createdAt).toBe(10_000);
    await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs);
    await scene.done;
    expect(scene.logger.entries.filter((e) => e.level === 'warn').map((e) => e.msg)).toEqual([]);
    expect(scene.request).toHaveBeenCalledTimes(1);
  });
});

describe('a member typing a house style while the bots’ state does not answer', () => {
  it('is offered no styles, within Discord’s 3 s of the autocomplete’s arrival', async () => {
    const client = new Client({ intents: [] });
    hookInteractionAction(client);
    const list = vi.fn(never);
    const logger = new RecordingLogger();
    const ctx = { runner: { styles: { list } }, logger } as unknown as BotContext;
    const offered: { at: number; choices: unknown }[] = [];
    client.on(Events.InteractionCreate, (interaction: Interaction) => {
      const typing = interaction as AutocompleteInteraction;
      vi.spyOn(typing, 'respond').mockImplementation(async (choices) => {
        offered.push({ at: Date.now(), choices });
      });
      void suggestStyles(typing, ctx);
    });
    const arrivedAt = Date.now();
    const payload = autocompletePayload({ id: snowflake(arrivedAt), token: 'token', commandId: snowflake() }, 'imagine', { prompt: 'a cat' }, { name: 'style', value: 'ne' }, place('guild'));
    (client as unknown as { actions: { InteractionCreate: { handle(data: unknown): void } } }).actions.InteractionCreate.handle(payload);
    await vi.advanceTimersByTimeAsync(DISCORD_LIMITS.acknowledgeMs);
    expect(list).toHaveBeenCalledTimes(1);
    expect(offered).toEqual([{ at: arrivedAt + ANSWERED_BY_MS, choices: [] }]);
    expect(logger.entries.map((e) => e.msg)).toEqual(['offered no house styles: they could not be read in time']);
  });
});
