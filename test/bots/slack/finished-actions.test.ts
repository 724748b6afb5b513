import { afterEach, describe, expect, it } from 'vitest';
import { describeFinishedJob } from '../../../bots/slack/render-job.js';
import { FakeSlack } from '../../fakes/slack/FakeSlack.js';
import type { FakeMessage } from '../../fakes/slack/slack-objects.js';
import { actionMessages, FAKE_CHANNEL_INTERVAL_MS, hasButton, imageShares, jobMessages, startHarness, visibleText, type Harness } from './harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const MEMBERS = 50;
/**
 * Bounds against a hang only, not a measure (how fast the buttons come is bench/slack-imagine.ts's): alone on a busy
 * machine the whole test takes under 20 s.
 */
const HANG_GUARD_MS = { step: 180_000, test: 600_000 };
const CHANNELS = 10;
interface Member {
  user: string;
  channel: string;
  prompt: string;
}

const members: Member[] = Array.from({ length: MEMBERS }, (_, i) => ({
  user: `U0MEMBER${String(i + 1).padStart(2, '0')}`,
  channel: `C0BUSY${String(i % CHANNELS).padStart(2, '0')}`,
  prompt: `a lantern for member ${i + 1}`,
}));

const quoted = (member: Member) => `“${member.prompt}”`;
const imagesOf = (fake: FakeSlack, member: Member) => imageShares(fake, member.channel).find((m) => m.text.startsWith(`<@${member.user}> here is your image: ${quoted(member)}`));
const actionsOf = (fake: FakeSlack, member: Member) => actionMessages(fake, member.channel).find((m) => visibleText(m).includes(quoted(member)));
const jobsOf = (fake: FakeSlack, member: Member) => jobMessages(fake, member.channel).filter((m) => visibleText(m).includes(`<@${member.user}> asked for: ${quoted(member)}`));

describe('a finished job’s Reroll, Edit and Delete, when many jobs end together', () => {
  it('lets each of 50 members reroll from beside their images without waiting for the Tier 3 budget, and answers a Cancel on a finished job that it is done and where', async () => {
    // Slack's limits as they are (Tier 3: 50 chat.updates a minute per workspace) and the bot's default budget
    // (40 a minute, 10 saved up): most job messages cannot show "Done" for a minute after 50 jobs end together.
    const fake = await new FakeSlack({ channelWriteIntervalMs: FAKE_CHANNEL_INTERVAL_MS }).start();
    // A job's first message waits its channel's turn behind the images and buttons of the jobs before it; past
    // `firstPostDeadlineMs` (30 s) the bot gives the job up and tells its member so. That deadline is the first-message
    // tests' to measure: here it is the test's own bound, so a loaded machine slows these writes without dropping a reroll.
    // Over Socket Mode, as the replay check is HTTP's alone: over HTTP each command and click is first claimed in the
    // bots' state (`replay-guard.ts`), a few file writes that the guard waits 1.5 s for before it drops the request
    // unanswered. On a machine the whole test suite loads, those writes took longer (the process's file system calls
    // waited up to a second each), and a member's press was dropped there: the test then waited out its hang guard
    // for a reroll that would never come. That bound is the replay guard's tests' to measure, not this one's.
    h = await startHarness({ mode: 'socket', fake, emulator: { latencyMs: 300 }, bot: { firstPostDeadlineMs: HANG_GUARD_MS.test } });

    // Each member clicks Reroll as soon as its button shows; the click works when a new job of theirs is posted (a
    // private answer to the click instead, such as a refusal, fails the test with its words).
    const roundOf = async (member: Member, command: { responseUrl: string }) => {
      const actions = await fake.waitFor(() => actionsOf(fake, member), `the buttons of ${member.prompt}`, HANG_GUARD_MS.step).catch((error: Error) => {
        // What the member saw instead, to tell a lost job from a slow one.
        const job = jobsOf(fake, member)[0];
        const answers = fake.responses.filter((r) => command.responseUrl.endsWith(r.id)).map((r) => JSON.stringify(r.body));
        throw new Error(`${error.message}; their job's message: ${job ? JSON.stringify(visibleText(job)) : 'none'}; answers to their command: ${answers.join(' | ') || 'none'}`);
      });
      const images = imagesOf(fake, member)!;
      const jobMessage = jobsOf(fake, member)[0]!;
      // What the member sees of their job's message then: still "Drawing…" with Cancel, when its "Done" waits for the budget.
      const seen: FakeMessage = { ...jobMessage, blocks: jobMessage.blocks };
      const click = await fake.clickButton(actions, 'pictor_reroll', member.user);
      expect(click.status).toBe(200);
      const reroll = await fake.waitFor(
        () => {
          const answer = fake.responses.find((r) => click.responseUrl.endsWith(r.id));
          if (answer) throw new Error(`the Reroll of ${member.prompt} was answered instead: ${JSON.stringify(answer.body)}`);
          return jobsOf(fake, member)[1];
        },
        `the reroll of ${member.prompt}`,
        HANG_GUARD_MS.step,
      );
      return { member, images, actions, seen, rerolledAt: reroll.postedAt };
    };

    // The members ask one after the other, each then waiting for their own buttons, as people do: Slack
    // gives each command and each click 3 s to be answered, and fifty intakes or clicks within one
    // moment on a loaded machine can miss that; the clicks come as the buttons do, not all at once. The jobs still end
    // together: the service draws four at a time, so they queue up behind each other whatever the pace of the asking,
    // and their updates behind the budget.
    const asked: number[] = [];
    const pending: ReturnType<typeof roundOf>[] = [];
    for (const m of members) {
      const command = await fake.command({ command: '/imagine', text: `${m.prompt} --quality low`, channel: m.channel, user: m.user });
      asked.push(command.status);
      const round = roundOf(m, command);
      round.catch(() => {}); // awaited below, with the others
      pending.push(round);
    }
    expect(asked).toEqual(members.map(() => 200));
    const rounds = await Promise.all(pending);

    // The Reroll worked while the job's own message still waited for the budget to show "Done": the buttons never wait
    // for it. (How many seconds that takes is the bench's to measure — bench/slack-imagine.ts, "A finished job's buttons
    // within seconds" in bench/RESULTS.md —, not a test's: a loaded machine stretches every wall-clock bound.)
    const doneBefore = (r: (typeof rounds)[number]) => jobsOf(fake, r.member)[0]!.edits.some((e) => e.at <= r.rerolledAt && !hasButton(e, 'pictor_cancel'));
    expect(rounds.filter((r) => !doneBefore(r)).length).toBeGreaterThan(MEMBERS / 2);
    // The buttons follow their images, where the member asked.
    for (const r of rounds) {
      expect(r.actions.channel).toBe(r.member.channel);
      expect(Number(r.actions.ts)).toBeGreaterThan(Number(r.images.ts));
    }
    // The jobs ended together: many job messages still showed them running when their buttons were out.
    const stale = rounds.filter((r) => hasButton(r.seen, 'pictor_cancel'));
    expect(stale.length).toBeGreaterThan(MEMBERS / 2);

    // A Cancel on such a message answers that the job is done and links to its buttons.
    const still = stale[0]!;
    const cancel = await fake.clickButton(still.seen, 'pictor_cancel', still.member.user);
    const answer = await fake.waitFor(() => fake.responses.find((r) => cancel.responseUrl.endsWith(r.id)), 'the answer to Cancel');
    const link = `https://pictor-test.slack.com/archives/${still.member.channel}/p${still.actions.ts.replace('.', '')}`;
    expect(answer.body).toMatchObject({ response_type: 'ephemeral', text: describeFinishedJob({ actionsAt: link }) });

    // The rerolls end too (their own buttons beside their images), and Slack never refused a write.
    await Promise.all(members.map((m) => fake.waitFor(() => actionMessages(fake, m.channel).filter((a) => visibleText(a).includes(quoted(m)))[1], `the buttons of the reroll of ${m.prompt}`, HANG_GUARD_MS.step)));
    expect(fake.rejectedWrites).toEqual([]);
    expect(fake.tier3Refusals).toEqual([]);
  }, HANG_GUARD_MS.test);
});
