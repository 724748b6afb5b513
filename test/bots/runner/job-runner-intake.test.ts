import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { type AdmittedJob, type IntakeAnswers, type JobIntent, type JobRunner } from '../../../bots/runner/index.js';
import { openBotState } from '../../../bots/state/index.js';
import { EditImagesSchema, EditRequestSchema, GenerationRequestSchema, PRICE_TABLE } from '../../../src/index.js';
import { silentLogger } from '../../../src/internal.js';
import { makeImage } from '../../helpers/images.js';
import { RecordingLogger } from '../discord/harness.js';
import { editBeingFetched, recordingSink, requester, useRunnerKit } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();
afterEach(() => {
  vi.restoreAllMocks();
});

const LOW = PRICE_TABLE['1024x1024'].low;

/** Answers that record what the intake asked of the surface, in order; `accept` gives `sink` unless told to fail. */
function answering(options: { accept?: (job: AdmittedJob) => Promise<boolean> } = {}) {
  const said: string[] = [];
  const reasons: unknown[] = [];
  const rec = recordingSink();
  const answers: IntakeAnswers = {
    async refuse(reason) {
      said.push('refuse');
      reasons.push(reason);
    },
    async accept(job) {
      said.push('accept');
      return (await (options.accept?.(job) ?? Promise.resolve(true))) ? { sink: rec.sink } : undefined;
    },
    async fail(reason) {
      said.push('fail');
      reasons.push(reason);
    },
  };
  return { answers, said, reasons, rec };
}

const low = (overrides: Partial<JobIntent> = {}): JobIntent => ({ kind: 'generate', prompt: 'a lighthouse', options: { quality: 'low' }, requester: requester(), ...overrides });

describe('the intake: one call decides a job before its first public answer', () => {
  it('refuses privately, before any answer, a job over the member’s budget: nothing reserved, nothing sent', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0, limits: { userDailyUsd: LOW / 2 } });
    const { answers, said, reasons } = answering();
    const who = requester();

    expect(await runner.request(low({ requester: who }), answers)).toBeUndefined();

    expect(said).toEqual(['refuse']);
    expect(reasons[0]).toMatchObject({ code: 'budget_user_daily' });
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('has taken the job’s reservation when it asks for the public answer: a second job racing for the last of the budget is refused meanwhile', async () => {
    const { runner } = await kit.runner({ partialImages: 0, limits: { userDailyUsd: LOW * 1.5 } });
    const who = requester();
    const second = answering();
    let secondWhileAnswering: unknown[] = [];
    const first = answering({
      accept: async () => {
        await runner.request(low({ requester: who }), second.answers);
        secondWhileAnswering = [...second.said];
        return true;
      },
    });

    const handle = await runner.request(low({ requester: who }), first.answers);

    expect(secondWhileAnswering).toEqual(['refuse']);
    expect(second.reasons[0]).toMatchObject({ code: 'budget_user_daily' });
    expect((await handle!.done).type).toBe('completed');
    expect(kit.emu.emulator.requests).toHaveLength(1);
  });

  it('checks the rules of the server first: a blocked word is refused as such even over budget and with a full queue', async () => {
    const { runner } = await kit.runner({ partialImages: 0, limits: { userDailyUsd: 0 }, maxQueuedJobs: 1, operatorControls: { blockedWords: ['kraken'] } });
    const { answers, reasons } = answering();

    await runner.request(low({ prompt: 'a kraken' }), answers);

    expect(reasons[0]).toMatchObject({ code: 'blocked_word' });
  });

  it('refuses a bad field before the queue and the ledger, naming the field as the surface calls it', async () => {
    const { runner } = await kit.runner({ partialImages: 0, limits: { userDailyUsd: 0 } });
    const { answers, reasons } = answering();

    await runner.request(low({ options: { background: 'transparent', output_format: 'jpeg' }, fieldNames: { output_format: '--format', background: '--background' } }), answers);

    expect(reasons[0]).toMatchObject({ code: 'validation_error', field: 'output_format' });
    expect((reasons[0] as Error).message).toContain('--format must be png or webp when --background is transparent');
  });

  it('drops an admitted job whose public answer could not be given: its reservation and place are given back, nothing sent', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0, limits: { userConcurrentJobs: 1 }, maxQueuedJobs: 1 });
    const who = requester();
    const expired = answering({ accept: async () => false });

    expect(await runner.request(low({ requester: who }), expired.answers)).toBeUndefined();

    expect(expired.said).toEqual(['accept']);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
    const next = answering();
    const handle = await runner.request(low({ requester: who }), next.answers);
    expect((await handle!.done).type).toBe('completed');
    expect(kit.emu.emulator.requests).toHaveLength(1);
  });

  it.each(['generate', 'edit'] as const)('runs the surface’s last step as it starts an accepted job, after its images; one that throws is a failed start, logged once, the job dropped, nothing sent (%s)', async (kind) => {
    const logger = new RecordingLogger();
    const { runner, store } = await kit.runner({ partialImages: 0, limits: { userConcurrentJobs: 1 }, logger });
    const who = requester();
    const order: string[] = [];
    const stopped = new Error('state write failed');
    const said: string[] = [];
    const answers: IntakeAnswers = {
      refuse: async () => void said.push('refuse'),
      accept: async () => {
        said.push('accept');
        return {
          sink: () => {},
          beforeStart: async () => {
            order.push('last step');
            throw stopped;
          },
        };
      },
      fail: async (reason) => void said.push(reason === stopped ? 'fail' : 'fail with another reason'),
    };
    const image = { data: Buffer.from(await makeImage('png', 16, 16)), filename: 'a.png' };
    const images = kind === 'edit' ? { declaredBytes: image.data.length, fetch: async () => (order.push('fetched'), [image]) } : undefined;

    expect(await runner.request(low({ kind, requester: who, images }), answers)).toBeUndefined();

    expect(order).toEqual(kind === 'edit' ? ['fetched', 'last step'] : ['last step']);
    expect(said).toEqual(['accept', 'fail']);
    const lines = logger.entries.filter((e) => /admitted job/.test(e.msg ?? ''));
    expect(lines.map((e) => [e.level, e.msg])).toEqual([['error', 'an admitted job could not start']]);
    expect(kit.emu.emulator.requests).toHaveLength(0);
    // Its reservation and its place were given back: the member's one job at a time runs next.
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
    const next = answering();
    expect((await (await runner.request(low({ requester: who }), next.answers))!.done).type).toBe('completed');
  });

  it('fetches an edit’s images only once the job is admitted and answered, and tells the surface when they fail: nothing sent or charged', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0 });
    const who = requester();
    const order: string[] = [];
    const { answers, said, reasons } = answering({
      accept: async () => {
        order.push('answered');
        return true;
      },
    });
    const broken = new Error('the download broke');

    const handle = await runner.request(
      low({
        kind: 'edit',
        requester: who,
        images: {
          declaredBytes: 1000,
          fetch: async () => {
            order.push('fetched');
            throw broken;
          },
        },
      }),
      answers,
    );

    expect(handle).toBeUndefined();
    expect(order).toEqual(['answered', 'fetched']);
    expect(said).toEqual(['accept', 'fail']);
    expect(reasons[0]).toBe(broken);
    expect(await store.spentToday(`discord:${who.userId}`, Date.now())).toBe(0);
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('refuses after the answer fetched images that are not images, by their content, naming the image: nothing sent', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    const { answers, said, reasons } = answering();

    await runner.request(low({ kind: 'edit', images: { declaredBytes: 10, fetch: async () => [{ data: Buffer.from('GIF89a…'), filename: 'a.png' }] } }), answers);

    expect(said).toEqual(['accept', 'fail']);
    expect(reasons[0]).toMatchObject({ code: 'validation_error', field: 'image[0]' });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('lets a drain wait for a job that was in the intake when it began (its images on their way), which then runs to its end', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    const data = Buffer.from(await makeImage('png'));
    const fetching = editBeingFetched(runner, requester(), data.length);
    expect(await fetching.admitted).toBeUndefined();

    let drained = false;
    const drain = runner.drain(10_000).then((left) => {
      drained = true;
      return left;
    });
    await expect(runner.submit(low(), recordingSink().sink)).rejects.toMatchObject({ code: 'restarting' });
    expect(drained).toBe(false);

    fetching.arrive([{ data }]);
    expect((await (await fetching.handle)!.done).type).toBe('completed');
    expect(await drain).toBe(0);
    expect(kit.emu.emulator.requests.map((r) => r.route)).toEqual(['edits']);
  });

  it('links a message only the member can open (a private job’s, or one they asked in a direct message) from their own history alone: not from the audit entry nor the admins’ view', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    onTestFinished(() => state.close());
    const { runner } = await kit.runner({ partialImages: 0, history: state, auditBatchMs: 60_000 });
    const posts: { entries: { link?: string | undefined; private?: boolean | undefined }[] }[] = [];
    runner.audit.setPoster('discord', { maxEntries: 10, post: async (post) => (posts.push(post), { messageId: '1' }), edit: async () => undefined, greet: async () => undefined });
    const admin = requester({ isAdmin: true, locale: 'en' });
    await runner.policy.set(admin, 'auditChannel', { channelId: 'C-audit' });
    const who = requester();
    let asked = 0;
    const final = { type: 'completed' as const, jobId: 'j1', images: [], usage: undefined, background: 'auto' as const, size: '1024x1024', quality: 'low', formats: [], cost: { totalUsd: 0.01 } };
    // Its record resolves once its audit entry is posted: the stop posts what waits at once.
    const link = (url: string) => async () => (asked++, url);
    const recorded = [
      runner.recordEnded(who, { key: 'private-key', kind: 'generate', prompt: 'a secret garden', options: {}, private: true, acceptedAt: Date.now() }, final as never, link('https://example.test/private-dm')),
      runner.recordEnded(who, { key: 'dm-key', kind: 'generate', prompt: 'a garden asked in a DM', options: {}, private: false, seenBy: 'member', acceptedAt: Date.now() }, final as never, link('https://example.test/dm')),
      runner.recordEnded(who, { key: 'public-key', kind: 'generate', prompt: 'a public garden', options: {}, private: false, acceptedAt: Date.now() }, final as never, link('https://example.test/channel')),
    ];
    await runner.shutdown({ graceMs: 0 });
    await Promise.all(recorded);

    expect(asked).toBe(3);
    const mine = await runner.history!.mine(who);
    const linkOf = (entries: readonly { key: string; link?: string | undefined }[], key: string) => entries.find((e) => e.key === key)?.link;
    expect(['private-key', 'dm-key', 'public-key'].map((key) => linkOf(mine, key))).toEqual(['https://example.test/private-dm', 'https://example.test/dm', 'https://example.test/channel']);
    const scope = (await runner.history!.ofScope(admin))!;
    expect(scope.map((e) => e.key).sort()).toEqual(['dm-key', 'public-key']);
    expect(['dm-key', 'public-key'].map((key) => linkOf(scope, key))).toEqual([undefined, 'https://example.test/channel']);
    const entries = posts.flatMap((p) => p.entries) as { prompt?: string; link?: string; private?: boolean }[];
    expect(entries.map((e) => [e.prompt, e.link, e.private]).sort()).toEqual([
      ['a garden asked in a DM', undefined, undefined],
      ['a public garden', 'https://example.test/channel', undefined],
      ['a secret garden', undefined, true],
    ]);
  });

  it('keeps the ended job in the member’s history under the surface’s key, with its link', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    onTestFinished(() => state.close());
    const { runner } = await kit.runner({ partialImages: 0, history: state });
    const who = requester();
    const answers: IntakeAnswers = {
      refuse: async () => {},
      fail: async () => {},
      accept: async () => ({ sink: () => {}, historyKey: 'job-key-1', historyLink: async () => 'https://example.test/message' }),
    };

    const handle = await runner.request(low({ requester: who }), answers);
    await handle!.done;
    await runner.history!.settled();

    const [entry] = await runner.history!.mine(who);
    expect(entry).toMatchObject({ key: 'job-key-1', prompt: 'a lighthouse', status: 'completed', link: 'https://example.test/message' });
  });

  it('tells the surface that a job’s end was recorded only once its history entry is written, not as its done settles (the entry waits for its link)', async () => {
    const state = await openBotState({ dataDir: await kit.newDir(), logger: silentLogger() });
    onTestFinished(() => state.close());
    const { runner } = await kit.runner({ partialImages: 0, history: state });
    const who = requester();
    let giveLink!: (url: string) => void;
    const link = new Promise<string>((resolve) => (giveLink = resolve));
    const marks: number[] = [];
    const answers: IntakeAnswers = {
      refuse: async () => {},
      fail: async () => {},
      accept: async () => ({
        sink: () => {},
        historyKey: 'job-key-held',
        historyLink: () => link,
        onEndRecorded: async () => void marks.push((await runner.history!.mine(who)).length),
      }),
    };

    const handle = await runner.request(low({ requester: who }), answers);
    await handle!.done;
    // The history's write waits for the link, asked of the platform: nothing is marked meanwhile.
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(marks).toEqual([]);

    giveLink('https://example.test/message');
    await vi.waitFor(() => expect(marks).toEqual([1]), { timeout: 15_000 });
    await runner.shutdown({ graceMs: 0 });
    expect(marks).toEqual([1]);
  });

  it('gives one reason for a request whose time to answer by has come, whichever step of the intake it came at: nothing reserved, nothing sent', async () => {
    const { runner, store } = await kit.runner({ partialImages: 0 });
    const realNow = Date.now.bind(Date);
    let shift = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + shift);
    /** The step whose answer comes only once the time to answer by has (the clock moves past it as it answers). */
    let lateAt: 'limits' | 'reservation' | undefined;
    const comingLate = <A extends unknown[], R>(step: typeof lateAt, original: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        const answered = await original(...args);
        if (lateAt === step) shift = 120_000;
        return answered;
      };
    const readLimits = comingLate('limits', runner.budgets.limitsFor.bind(runner.budgets));
    vi.spyOn(runner.budgets, 'limitsFor').mockImplementation(readLimits);
    const reserveLate = comingLate('reservation', store.reserve.bind(store));
    const reserve = vi.spyOn(store, 'reserve').mockImplementation(reserveLate);
    const reasonOf = async (step: typeof lateAt, answerBy: number) => {
      [lateAt, shift] = [step, 0];
      const { answers, said, reasons } = answering();
      expect(await runner.request(low({ answerBy }), answers)).toBeUndefined();
      expect(said).toEqual(['refuse']);
      return (reasons[0] as Error).message;
    };

    const beforeTheIntake = await reasonOf(undefined, realNow() - 1);
    const beforeReserving = await reasonOf('limits', realNow() + 60_000);
    expect(reserve).not.toHaveBeenCalled();
    // The reservation that came is ended at once.
    const afterReserving = await reasonOf('reservation', realNow() + 60_000);
    expect(reserve).toHaveBeenCalledOnce();

    // One reason, naming the step that was waited for, so the log says which one stalled.
    expect(beforeTheIntake).toContain('the house styles');
    expect(beforeReserving).toContain('the ledger');
    expect(afterReserving).toContain('the ledger');
    const reason = (message: string) => message.replace(/the house styles|the ledger/, '<step>');
    expect(new Set([beforeTheIntake, beforeReserving, afterReserving].map(reason)).size).toBe(1);
    expect(await store.activeJobs()).toEqual([]);
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('parses a request once on its way to the service: the fields once, an edit’s images once, never the whole again', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    // Parses by the bot (the runner, the client), not by the emulator receiving the request.
    const parses = (schema: { safeParse: (...args: never[]) => unknown }) => {
      const calls: boolean[] = [];
      const original = schema.safeParse.bind(schema) as (...args: unknown[]) => unknown;
      vi.spyOn(schema, 'safeParse').mockImplementation(((...args: unknown[]) => {
        calls.push(!new Error().stack!.includes('/src/emulator/'));
        return original(...args);
      }) as never);
      return () => calls.filter(Boolean).length;
    };
    const fields = parses(GenerationRequestSchema);
    const images = parses(EditImagesSchema);
    const whole = parses(EditRequestSchema);
    const data = Buffer.from(await makeImage('png'));

    await (await runner.submit(low(), recordingSink().sink)).done;
    expect(fields()).toBe(1);
    const edit = await runner.request(low({ kind: 'edit', images: { declaredBytes: data.length, fetch: async () => [{ data }] } }), answering().answers);
    expect((await edit!.done).type).toBe('completed');

    expect(kit.emu.emulator.requests.map((r) => r.route)).toEqual(['generations', 'edits']);
    expect(fields()).toBe(2);
    expect(images()).toBe(1);
    expect(whole()).toBe(0);
  });
});

describe('the intake of an entry point that opens a form first', () => {
  async function formOf(runner: JobRunner, who = requester(), form: { private?: boolean; answerBy?: number } = {}) {
    const said: string[] = [];
    let reason: unknown;
    const opened = await runner.requestForm(
      who,
      {
        refuse: async (r) => {
          said.push('refuse');
          reason = r;
        },
        accept: async () => void said.push('accept'),
      },
      form,
    );
    return { opened, said, reason };
  }

  it('refuses the form privately once the time to answer by has come while the member’s defaults do not come: it does not open', async () => {
    const { runner } = await kit.runner({ partialImages: 0, memberDefaults: { get: () => new Promise(() => undefined), change: async () => ({}) } });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    onTestFinished(() => void vi.useRealTimers());
    const form = formOf(runner, requester(), { answerBy: Date.now() + 2_000 });
    await vi.advanceTimersByTimeAsync(2_000);
    const { opened, said, reason } = await form;
    expect(opened).toBe(false);
    expect(said).toEqual(['refuse']);
    expect(reason).toBeInstanceOf(Error);
  });

  it('opens the form while some budget is left, and refuses it privately once a budget is spent to its end', async () => {
    const { runner } = await kit.runner({ partialImages: 0, limits: { userDailyUsd: LOW } });
    const who = requester();
    expect(await formOf(runner, who)).toMatchObject({ opened: true, said: ['accept'] });

    await (await runner.submit(low({ requester: who }), recordingSink().sink)).done;

    const refused = await formOf(runner, who);
    expect(refused).toMatchObject({ opened: false, said: ['refuse'], reason: { code: 'budget_user_daily' } });
    expect((refused.reason as Error).message).toMatch(/^You have reached your daily budget of/);
  });

  it('refuses by the rules of who and where before the form opens', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.policy.set(requester({ isAdmin: true }), 'channels', ['art']);

    expect(await formOf(runner, requester({ channelId: 'general' }))).toMatchObject({ opened: false, reason: { code: 'channel_not_allowed' } });
    expect(await formOf(runner, requester({ channelId: 'art' }))).toMatchObject({ opened: true });
  });

  it('refuses before the form opens a job that would be private where private results are off: a private result’s edit, or by the member’s default', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.policy.set(requester({ isAdmin: true }), 'privateResults', false);
    const [member, privateByDefault] = [requester(), requester()];
    await runner.members.change(privateByDefault, { private: true });

    const ofPrivateResult = await formOf(runner, member, { private: true });
    expect(ofPrivateResult).toMatchObject({ opened: false, said: ['refuse'], reason: { code: 'private_not_allowed', words: { key: 'refusal.private_not_allowed_form', values: { fromDefault: 'no' } } } });
    expect(await formOf(runner, privateByDefault)).toMatchObject({ opened: false, reason: { code: 'private_not_allowed', words: { values: { fromDefault: 'yes' } } } });
    // A public result's edit, and a member without a private default: the form opens.
    expect(await formOf(runner, member)).toMatchObject({ opened: true });
    expect(await formOf(runner, privateByDefault, { private: false })).toMatchObject({ opened: true });
  });

  it('refuses a form’s job submitted after private results were turned off with the words it gives before the form opens: a private result’s edit, or by the member’s default', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.policy.set(requester({ isAdmin: true }), 'privateResults', false);
    const [member, privateByDefault] = [requester(), requester()];
    await runner.members.change(privateByDefault, { private: true });
    const submitted = async (who: JobIntent['requester'], asked: boolean | undefined) => {
      const { answers, said, reasons } = answering();
      await runner.request({ kind: 'generate', prompt: 'a secret diary', options: { quality: 'low' }, requester: who, private: asked, inForm: true }, answers);
      return { said, reason: reasons[0] };
    };
    expect(await submitted(member, true)).toMatchObject({ said: ['refuse'], reason: { code: 'private_not_allowed', words: { key: 'refusal.private_not_allowed_form', values: { fromDefault: 'no' } } } });
    expect(await submitted(privateByDefault, undefined)).toMatchObject({ said: ['refuse'], reason: { code: 'private_not_allowed', words: { key: 'refusal.private_not_allowed_form', values: { fromDefault: 'yes' } } } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });
});

describe('the intake of a job a button runs again', () => {
  it('refuses a private job a button runs again (the member’s own Reroll or Retry) where private results are off since, with advice the button can follow', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.policy.set(requester({ isAdmin: true }), 'privateResults', false);
    const member = requester();
    const again = (memberDefaults: JobIntent['memberDefaults'], byButton: boolean | undefined) => {
      const { answers, said, reasons } = answering();
      return runner.request({ kind: 'generate', prompt: 'a secret diary', options: { quality: 'low' }, requester: member, private: true, memberDefaults, again: byButton }, answers).then(() => ({ said, reason: reasons[0] }));
    };
    // Its own Reroll or Retry (the job as it was sent): no private option on a button, so the advice names none.
    expect(await again('previews', true)).toMatchObject({ said: ['refuse'], reason: { code: 'private_not_allowed', words: { key: 'refusal.private_not_allowed_again' } } });
    // Another member's Reroll of a private job (their defaults where it chose nothing): a button too, the same advice.
    expect(await again(true, true)).toMatchObject({ said: ['refuse'], reason: { code: 'private_not_allowed', words: { key: 'refusal.private_not_allowed_again' } } });
    // Asked by hand (`--private`, `private: True`): asking again without it is advice they can follow.
    expect(await again(true, undefined)).toMatchObject({ said: ['refuse'], reason: { code: 'private_not_allowed', words: { key: 'refusal.private_not_allowed' } } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });

  it('refuses another member’s Reroll of a public job that their private default would make private with advice the button can follow: their default off, then press again', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    await runner.policy.set(requester({ isAdmin: true }), 'privateResults', false);
    const presser = requester();
    await runner.members.change(presser, { private: true });
    const rerolled = async (byButton: boolean | undefined) => {
      const { answers, said, reasons } = answering();
      await runner.request({ kind: 'generate', prompt: 'a public kite', options: { quality: 'low' }, requester: presser, memberDefaults: true, again: byButton }, answers);
      return { said, reason: reasons[0] };
    };
    // A button has no public option to ask for: the advice is their default turned off, then the button again.
    expect(await rerolled(true)).toMatchObject({ said: ['refuse'], reason: { code: 'private_not_allowed', words: { key: 'refusal.private_not_allowed_again_default', values: { fromDefault: 'yes' } } } });
    // The same job asked with the command: asking for a public one is advice they can follow.
    expect(await rerolled(undefined)).toMatchObject({ said: ['refuse'], reason: { code: 'private_not_allowed', words: { key: 'refusal.private_not_allowed', values: { fromDefault: 'yes' } } } });
    expect(kit.emu.emulator.requests).toHaveLength(0);
  });
});
