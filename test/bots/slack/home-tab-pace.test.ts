import { afterEach, describe, expect, it, vi } from 'vitest';
import type { webApi } from '@slack/bolt';
import { FORGET_RETRIES, FORGET_WAIT_MS, HomeTabs, type ForgetPublish, type HomeViewers } from '../../../bots/slack/home-tab.js';
import { memorySpace } from '../../../bots/runner/memory-space.js';
import type { Requester } from '../../../bots/runner/index.js';
import type { RequestStore } from '../../../bots/slack/RequestStore.js';
import type { SlackActor, SlackJobRunner } from '../../../bots/slack/SlackJobs.js';
import { silentLogger } from '../../../src/internal.js';
import { warningsKept } from '../../helpers/warnings-kept.js';

/**
 * The pace of the Home tabs' publishes, by the clock (fake timers): what is rendered is not the point here (the
 * harness's tests read it), so `render` gives an empty view and Slack's `views.publish` is a recording stub.
 */
const TEAM = 'T0PACE';
const actor = (userId: string): SlackActor => ({ userId, teamId: TEAM, channelId: 'C0ART' });
const requester = (userId: string): Requester => ({ platform: 'slack', scopeId: TEAM, userId, channelId: 'C0ART' });

afterEach(() => {
  vi.useRealTimers();
});

/** Slack answering `ok: false` with its own trouble (`internal_error`) to a publish, as the Web API client throws it. */
const slackTrouble = () => Object.assign(new Error('An API error occurred: internal_error'), { code: 'slack_webapi_platform_error', data: { ok: false, error: 'internal_error' } });

/** Slack's `views.publish`, recording whose view went out; `answer` says when Slack answers each (at once by default). */
function recordingSlack(answer: (userId: string) => Promise<void> = () => Promise.resolve()) {
  const published: string[] = [];
  const client = {
    views: {
      publish: ({ user_id }: { user_id: string }) => {
        published.push(user_id);
        return answer(user_id);
      },
    },
  } as unknown as webApi.WebClient;
  return { client, published };
}

/**
 * Slack's `views.publish`, recording each view that went out as `<user>#<n>`: `answer` says when Slack answers the nth
 * (at once by default).
 */
function countingSlack(answer: (n: number) => Promise<void> = () => Promise.resolve()) {
  const published: string[] = [];
  const client = {
    views: {
      publish: ({ user_id }: { user_id: string }) => {
        published.push(`${user_id}#${published.length + 1}`);
        return answer(published.length);
      },
    },
  } as unknown as webApi.WebClient;
  return { client, published };
}

/**
 * Slack's `views.publish`, recording each view that went out as `<user>#<n>`: it does not answer the first (the member's
 * own publish, rendered before a forget) until `answerFirst` is called; the others at once.
 */
function slackHoldingTheFirstPublish() {
  let answer: () => void = () => {};
  const slack = countingSlack((n) => (n === 1 ? new Promise<void>((resolve) => (answer = resolve)) : Promise.resolve()));
  return { ...slack, answerFirst: () => answer() };
}

/** The Home tabs, their views rendered empty, at `perMinute` publishes a minute (the default pace unless given). */
function homeTabs({ perMinute, logger = silentLogger(), client }: { perMinute?: number; logger?: ConstructorParameters<typeof HomeTabs>[0]['logger']; client?: webApi.WebClient } = {}): HomeTabs {
  const clientFor = async () => client;
  const homes = new HomeTabs({ runner: {} as SlackJobRunner, store: {} as RequestStore, logger, command: '/imagine', clientFor, requesterOf: (a) => requester(a.userId), ...(perMinute === undefined ? {} : { perMinute }) });
  vi.spyOn(homes, 'render').mockResolvedValue({ type: 'home', blocks: [] });
  return homes;
}

/** What a test of the pace drives: the Home tabs, a member opening their Home or forgetting, and the warnings logged. */
interface Homes {
  homes: HomeTabs;
  open: (userId: string) => Promise<void>;
  forget: (userId: string) => Promise<ForgetPublish>;
  warnings: string[];
}

/**
 * Runs `test` on fake timers against Home tabs publishing through `slack` (see `homeTabs`), their warnings kept; then,
 * passed or failed, Slack answers what it still holds (`letGo`) and the Home tabs stop.
 */
async function withHomes({ slack, perMinute, letGo = () => {} }: { slack: { client: webApi.WebClient }; perMinute?: number; letGo?: () => void }, test: (homes: Homes) => Promise<void>): Promise<void> {
  vi.useFakeTimers();
  const { logger, warnings } = warningsKept();
  const { client } = slack;
  const homes = homeTabs({ perMinute, logger, client });
  try {
    await test({ homes, open: (user) => homes.opened(client, actor(user), requester(user)), forget: (user) => homes.forgotten(client, actor(user), requester(user)), warnings });
  } finally {
    letGo();
    const stopped = homes.stop();
    // Bottleneck drops the publishes still queued for the pace on timers due at once.
    await vi.advanceTimersByTimeAsync(0);
    await stopped;
  }
}

describe('a Home tab published after a forget', () => {
  it('is sent at once, past the pace: it waits neither for other members’ publishes under way nor for those queued for the pace', async () => {
    /** Bob's publish is sent and Slack has not answered it yet. */
    let answerBob: () => void = () => {};
    const slack = recordingSlack((user) => (user === 'U0BOB' ? new Promise<void>((resolve) => (answerBob = resolve)) : Promise.resolve()));
    await withHomes({ slack, perMinute: 2, letGo: () => answerBob() }, async ({ open, forget }) => {
      // Two publishes a minute: Bob's and Carol's go now, six more members' wait for the next minutes.
      for (const user of ['U0BOB', 'U0CAROL', 'U0DAN', 'U0ERIN', 'U0FRANK', 'U0GRACE', 'U0HEIDI', 'U0IVAN']) void open(user);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(slack.published).toEqual(['U0BOB', 'U0CAROL']);

      let forgotten = false;
      void forget('U0ALICE').then(() => (forgotten = true));
      // Alice's goes now, with Bob's still unanswered and three minutes of publishes queued.
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0BOB', 'U0CAROL', 'U0ALICE']);
      expect(forgotten).toBe(true);
      // It took nothing from the pace: the next minute sends two of the queued ones.
      await vi.advanceTimersByTimeAsync(60_000);
      expect(slack.published).toEqual(['U0BOB', 'U0CAROL', 'U0ALICE', 'U0DAN', 'U0ERIN']);
    });
  });

  it('comes after the member’s own publish under way, so a view rendered before the forget never replaces it', async () => {
    const slack = slackHoldingTheFirstPublish();
    await withHomes({ slack, letGo: slack.answerFirst }, async ({ open, forget }) => {
      void open('U0ALICE');
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0ALICE#1']);
      let forgotten = false;
      void forget('U0ALICE').then(() => (forgotten = true));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(slack.published).toEqual(['U0ALICE#1']);
      expect(forgotten).toBe(false);
      slack.answerFirst();
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2']);
      expect(forgotten).toBe(true);
    });
  });
});

describe('a forget’s wait for the member’s own publish under way', () => {
  it('ends after FORGET_WAIT_MS: the forget’s publish goes then, answered as `retrying` (the earlier view may still reach Slack after it), and goes again once the earlier one ends, so the view rendered before the forget is not the last', async () => {
    const slack = slackHoldingTheFirstPublish();
    await withHomes({ slack, letGo: slack.answerFirst }, async ({ open, forget, warnings }) => {
      void open('U0ALICE');
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0ALICE#1']);
      let outcome: string | undefined;
      void forget('U0ALICE').then((o) => (outcome = o));
      await vi.advanceTimersByTimeAsync(FORGET_WAIT_MS - 1);
      expect(slack.published).toEqual(['U0ALICE#1']);
      expect(outcome).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2']);
      // Slack took it, but the earlier view may still come after it: not told as done.
      expect(outcome).toBe('retrying');
      expect(warnings).toContain('a forget’s Home tab did not wait longer for the member’s publish under way: it is published again once that one ends');
      // The earlier one ends: the forget's view goes again, after it.
      slack.answerFirst();
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2', 'U0ALICE#3']);
    });
  });
});

describe('a forget’s publish sent again after the member’s late publish', () => {
  it('counts its tries with those of the forget it follows: never more than FORGET_RETRIES retries in all, however late the member’s own publish was', async () => {
    let answerOpened: () => void = () => {};
    let forgetCalls = 0;
    /** The member's own publish (from their open) is held until told; every forget's publish Slack does not take. */
    let holding = false;
    const slack = recordingSlack(() => {
      if (holding) {
        holding = false;
        return new Promise<void>((resolve) => (answerOpened = resolve));
      }
      forgetCalls++;
      return Promise.reject(slackTrouble());
    });
    await withHomes({ slack, letGo: () => answerOpened() }, async ({ homes, open, forget, warnings }) => {
      // The forget's publish fails: tried again a minute later.
      expect(await forget('U0ALICE')).toBe('retrying');
      expect(forgetCalls).toBe(1);
      // Meanwhile the member opens their Home, and Slack holds that publish: the retry waits for it, then goes (and fails).
      holding = true;
      void open('U0ALICE');
      await vi.advanceTimersByTimeAsync(60_000 + FORGET_WAIT_MS);
      expect(forgetCalls).toBe(2);
      // The held publish ends: the forget's goes again (and fails), then the retries left run out.
      answerOpened();
      await vi.advanceTimersByTimeAsync(60 * 60_000);
      await homes.flush();
      // The forget's publish, its retries, and the one sent again after the member's own.
      expect(forgetCalls).toBe(1 + FORGET_RETRIES + 1);
      expect(warnings.filter((w) => w.startsWith('gave up publishing a Home tab after a forget'))).toHaveLength(1);
    });
  });
});

describe('a forget’s publish that went after its wait ran out and that Slack did not take', () => {
  it('is sent again once, after the member’s own publish ends — not also a minute later by its retry', async () => {
    let answerOpened: () => void = () => {};
    /** The member's own publish (from their open) is held until told; the forget's first is not taken; the rest are. */
    const slack = countingSlack((n) => {
      if (n === 1) return new Promise<void>((resolve) => (answerOpened = resolve));
      if (n === 2) return Promise.reject(slackTrouble());
      return Promise.resolve();
    });
    await withHomes({ slack, letGo: () => answerOpened() }, async ({ open, forget }) => {
      void open('U0ALICE');
      await vi.advanceTimersByTimeAsync(10);
      let outcome: string | undefined;
      void forget('U0ALICE').then((o) => (outcome = o));
      await vi.advanceTimersByTimeAsync(FORGET_WAIT_MS);
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2']);
      expect(outcome).toBe('retrying');
      // The member's own publish ends: the forget's goes again, after it, and is taken.
      answerOpened();
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2', 'U0ALICE#3']);
      // Nothing more: that one was the failed publish's retry too.
      await vi.advanceTimersByTimeAsync(60 * 60_000);
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2', 'U0ALICE#3']);
    });
  });
});

describe('a stop after a forget’s wait for the member’s own publish ran out', () => {
  it('waits for the forget’s publish sent again once that publish ends, and sends it, so the earlier view is not left last', async () => {
    const slack = slackHoldingTheFirstPublish();
    await withHomes({ slack, letGo: slack.answerFirst }, async ({ homes, open, forget }) => {
      void open('U0ALICE');
      await vi.advanceTimersByTimeAsync(10);
      void forget('U0ALICE');
      await vi.advanceTimersByTimeAsync(FORGET_WAIT_MS);
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2']);
      let stopped = false;
      void homes.stop().then(() => (stopped = true));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(stopped).toBe(false);
      slack.answerFirst();
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2', 'U0ALICE#3']);
      expect(stopped).toBe(true);
    });
  });
});

describe('a forget’s publish sent after its wait ran out, that Slack refuses while the bot stops', () => {
  /**
   * The member's own publish is held until told; the forget's first is held, then refused; the one sent again once the
   * member's ended is taken or refused (`again`). Answers the forget's outcome and the warnings once the stop ended.
   * A check failing before it lets both go lets them go on the way out, so the stop ends and the failure is what shows.
   */
  async function forgetDuringStop(again: 'taken' | 'refused') {
    let answerOpened: () => void = () => {};
    let refuseForget: () => void = () => {};
    const slack = countingSlack((n) => {
      if (n === 1) return new Promise<void>((resolve) => (answerOpened = resolve));
      if (n === 2) return new Promise<void>((_, reject) => (refuseForget = () => reject(slackTrouble())));
      return again === 'refused' ? Promise.reject(slackTrouble()) : Promise.resolve();
    });
    let outcome: string | undefined;
    let gaveUp: string[] = [];
    await withHomes({ slack, letGo: () => { answerOpened(); refuseForget(); } }, async ({ homes, open, forget, warnings }) => {
      void open('U0ALICE');
      await vi.advanceTimersByTimeAsync(10);
      void forget('U0ALICE').then((o) => (outcome = o));
      await vi.advanceTimersByTimeAsync(FORGET_WAIT_MS);
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2']);
      const stopped = homes.stop();
      refuseForget();
      await vi.advanceTimersByTimeAsync(10);
      // The stop still sends it again once the member's own publish ends (so the earlier view is not the last), but
      // nothing tries it again if Slack refuses that one too: the member is told what holds for sure.
      answerOpened();
      await vi.advanceTimersByTimeAsync(10);
      await stopped;
      expect(slack.published).toEqual(['U0ALICE#1', 'U0ALICE#2', 'U0ALICE#3']);
      gaveUp = warnings.filter((w) => w.startsWith('gave up publishing a Home tab after a forget'));
    });
    return { outcome, gaveUp };
  }

  it('answers `next-open`: no retry is scheduled during a stop, so only the member’s next open of their Home publishes it for sure', async () => {
    const { outcome } = await forgetDuringStop('refused');
    expect(outcome).toBe('next-open');
  });

  it('logs no give-up when the publish sent again once the member’s own ended is taken', async () => {
    const { gaveUp } = await forgetDuringStop('taken');
    expect(gaveUp).toEqual([]);
  });

  it('logs the give-up once when Slack refuses the publish sent again too', async () => {
    const { gaveUp } = await forgetDuringStop('refused');
    expect(gaveUp).toHaveLength(1);
  });
});

describe('a stop of the Home tabs', () => {
  it('finishes the publish Slack is answering and drops those queued for the pace, without waiting for them or warning of them', async () => {
    /** Bob's publish is sent and Slack has not answered it yet (a slow Slack). */
    let answerBob: () => void = () => {};
    const slack = recordingSlack((user) => (user === 'U0BOB' ? new Promise<void>((resolve) => (answerBob = resolve)) : Promise.resolve()));
    await withHomes({ slack, perMinute: 2, letGo: () => answerBob() }, async ({ homes, open, warnings }) => {
      // Two publishes a minute: Bob's and Carol's go now, four more members' wait for the next minutes.
      for (const user of ['U0BOB', 'U0CAROL', 'U0DAN', 'U0ERIN', 'U0FRANK', 'U0GRACE']) void open(user);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(slack.published).toEqual(['U0BOB', 'U0CAROL']);
      // A change coalescing when the stop comes is dropped too.
      homes.changed(TEAM, 'U0CAROL');

      let stopped = false;
      void homes.stop().then(() => (stopped = true));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(stopped).toBe(false);
      answerBob();
      await vi.advanceTimersByTimeAsync(10);
      expect(stopped).toBe(true);
      await vi.advanceTimersByTimeAsync(5 * 60_000);
      expect(slack.published).toEqual(['U0BOB', 'U0CAROL']);
      expect(warnings).toEqual([]);
    });
  });

  it('finishes a forget’s publish Slack is answering instead of dropping it, so Slack stops showing the erased prompts', async () => {
    /** Alice's publish is sent and Slack has not answered it yet (a slow Slack, or a 429 being waited out). */
    let answerAlice: () => void = () => {};
    const slack = recordingSlack((user) => (user === 'U0ALICE' ? new Promise<void>((resolve) => (answerAlice = resolve)) : Promise.resolve()));
    await withHomes({ slack, perMinute: 2, letGo: () => answerAlice() }, async ({ homes, open, forget }) => {
      // Two publishes a minute: Bob's and Carol's go now; Dan's change waits for the next minute, Alice's forget does not.
      for (const user of ['U0BOB', 'U0CAROL', 'U0DAN']) void open(user);
      await vi.advanceTimersByTimeAsync(1_000);
      let forgotten = false;
      void forget('U0ALICE').then(() => (forgotten = true));
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0BOB', 'U0CAROL', 'U0ALICE']);

      let stopped = false;
      void homes.stop().then(() => (stopped = true));
      await vi.advanceTimersByTimeAsync(10);
      expect(stopped).toBe(false);
      answerAlice();
      await vi.advanceTimersByTimeAsync(10);
      expect(forgotten).toBe(true);
      expect(stopped).toBe(true);
      // Dan's queued change and the changes asked after the stop are not sent.
      homes.changed(TEAM, 'U0BOB');
      await vi.advanceTimersByTimeAsync(5 * 60_000);
      expect(slack.published).toEqual(['U0BOB', 'U0CAROL', 'U0ALICE']);
    });
  });

  it('waits for a forget asked while it stops, even one asked after it counted the publishes to wait for', async () => {
    /** Alice's and Dan's publishes stay unanswered until the test answers them (a slow Slack). */
    const answer = new Map<string, () => void>();
    const slack = recordingSlack((user) => (['U0ALICE', 'U0DAN'].includes(user) ? new Promise<void>((resolve) => answer.set(user, resolve)) : Promise.resolve()));
    await withHomes({ slack, perMinute: 2, letGo: () => answer.forEach((answerOne) => answerOne()) }, async ({ homes, open, forget }) => {
      // Two publishes a minute: Bob's and Carol's go now, and Alice's forget past the pace.
      for (const user of ['U0BOB', 'U0CAROL']) void open(user);
      await vi.advanceTimersByTimeAsync(1_000);
      void forget('U0ALICE');
      await vi.advanceTimersByTimeAsync(1_000);

      let stopped = false;
      void homes.stop().then(() => (stopped = true));
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0BOB', 'U0CAROL', 'U0ALICE']);
      // Dan forgets while the stop waits for Alice's publish.
      let danForgotten = false;
      void forget('U0DAN').then(() => (danForgotten = true));
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0BOB', 'U0CAROL', 'U0ALICE', 'U0DAN']);
      answer.get('U0ALICE')?.();
      await vi.advanceTimersByTimeAsync(10);
      expect(stopped).toBe(false);
      answer.get('U0DAN')?.();
      await vi.advanceTimersByTimeAsync(10);
      expect(danForgotten).toBe(true);
      expect(stopped).toBe(true);
    });
  });

  it('waits for a forget asked while it stops that first waits for the member’s own publish under way', async () => {
    /** Each of Erin's publishes stays unanswered until the test answers it (a slow Slack). */
    const answers: (() => void)[] = [];
    const slack = recordingSlack(() => new Promise<void>((resolve) => answers.push(resolve)));
    await withHomes({ slack, letGo: () => answers.forEach((answerOne) => answerOne()) }, async ({ homes, open, forget }) => {
      void open('U0ERIN');
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0ERIN']);

      let stopped = false;
      void homes.stop().then(() => (stopped = true));
      let forgotten = false;
      void forget('U0ERIN').then(() => (forgotten = true));
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0ERIN']);
      answers[0]?.();
      await vi.advanceTimersByTimeAsync(10);
      expect(slack.published).toEqual(['U0ERIN', 'U0ERIN']);
      expect(stopped).toBe(false);
      answers[1]?.();
      await vi.advanceTimersByTimeAsync(10);
      expect(forgotten).toBe(true);
      expect(stopped).toBe(true);
    });
  });

  it('does not send a forget asked after it has stopped, and logs it', async () => {
    const slack = recordingSlack();
    await withHomes({ slack }, async ({ homes, forget, warnings }) => {
      await homes.stop();
      // Only her next open of her Home publishes it: what the forget's answer tells her.
      expect(await forget('U0ERIN')).toBe('next-open');
      await homes.settled();
      expect(slack.published).toEqual([]);
      expect(warnings).toHaveLength(1);
    });
  });
});

describe('a forget’s Home tab that Slack did not take', () => {
  /** Slack answering `ok: false` with its own trouble (`internal_error`) to each publish. */
  const refusing = () => Promise.reject(slackTrouble());

  it('is tried again on the audit posts’ schedule (a minute, then twice as long each time), then given up and logged: four more tries at most', async () => {
    const slack = recordingSlack(refusing);
    await withHomes({ slack }, async ({ forget, warnings }) => {
      expect(await forget('U0ALICE')).toBe('retrying');
      expect(slack.published).toHaveLength(1);
      for (const [minutes, tries] of [[1, 2], [2, 3], [4, 4], [8, 5]] as const) {
        await vi.advanceTimersByTimeAsync(minutes * 60_000 - 1);
        expect(slack.published).toHaveLength(tries - 1);
        await vi.advanceTimersByTimeAsync(1);
        expect(slack.published).toHaveLength(tries);
      }
      await vi.advanceTimersByTimeAsync(60 * 60_000);
      expect(slack.published).toHaveLength(5);
      expect(warnings.filter((w) => w.startsWith('gave up publishing a Home tab after a forget'))).toHaveLength(1);
    });
  });

  it('stops being tried again when a retry passes', async () => {
    let fails = 1;
    const slack = recordingSlack(() => (fails-- > 0 ? refusing() : Promise.resolve()));
    await withHomes({ slack }, async ({ forget }) => {
      expect(await forget('U0ALICE')).toBe('retrying');
      await vi.advanceTimersByTimeAsync(60 * 60_000);
      expect(slack.published).toHaveLength(2);
    });
  });

  it('is not tried again when Slack does not take it during a stop: the forget answers that only the member’s next open publishes it', async () => {
    /** Alice's publish stays unanswered until the test fails it (a slow Slack, then its trouble). */
    let failAlice: () => void = () => {};
    const slack = recordingSlack(() => new Promise<void>((_, reject) => (failAlice = () => void refusing().catch(reject))));
    await withHomes({ slack }, async ({ homes, forget }) => {
      const outcome = forget('U0ALICE');
      await vi.advanceTimersByTimeAsync(10);
      let stopped = false;
      void homes.stop().then(() => (stopped = true));
      failAlice();
      expect(await outcome).toBe('next-open');
      await vi.advanceTimersByTimeAsync(60 * 60_000);
      expect(stopped).toBe(true);
      expect(slack.published).toHaveLength(1);
    });
  });

  it('is given up, and logged, when the bot stops: the stop does not wait for its retry', async () => {
    const slack = recordingSlack(refusing);
    await withHomes({ slack }, async ({ homes, forget, warnings }) => {
      expect(await forget('U0ALICE')).toBe('retrying');
      let stopped = false;
      void homes.stop().then(() => (stopped = true));
      await vi.advanceTimersByTimeAsync(10);
      expect(stopped).toBe(true);
      expect(warnings.filter((w) => w.startsWith('gave up publishing Home tabs after a forget'))).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(60 * 60_000);
      expect(slack.published).toHaveLength(1);
    });
  });
});

describe('who opened their Home', () => {
  it('is kept for the 500 members of a workspace who opened it last: the one seen longest ago goes first', async () => {
    const viewers = memorySpace<HomeViewers>();
    const { client } = recordingSlack();
    let now = 0;
    const homes = new HomeTabs({ runner: {} as SlackJobRunner, store: {} as RequestStore, logger: silentLogger(), command: '/imagine', perMinute: 1000, viewers, now: () => now, clientFor: async () => client, requesterOf: (a) => requester(a.userId) });
    vi.spyOn(homes, 'render').mockResolvedValue({ type: 'home', blocks: [] });
    for (let i = 0; i <= 500; i++) {
      now = i;
      await homes.opened(client, actor(`U${i}`), requester(`U${i}`));
    }
    const kept = Object.keys((await viewers.get(`slack-${TEAM}`)) ?? {});
    expect(kept).toHaveLength(500);
    expect(kept).not.toContain('U0');
    expect(kept).toContain('U500');
    await homes.stop();
  });
});
