import Bottleneck from 'bottleneck';
import type { types, webApi } from '@slack/bolt';
import type { LoggerLike } from 'pictor';
import { LATE, within } from 'pictor/internal';
import { anyOf, defaultQualityFor, describeFailure, describeHowToChange, describeOwnDefaults, describeSettings, describeUsage, historyLineValues, listOf, qualitiesFor, say, unreadableRulesRefusal, type HistoryEntry, type Requester } from '../runner/index.js';
import { ACTIONS } from './render-job.js';
import { memorySpace } from '../runner/memory-space.js';
import { auditRetryWaitMs } from '../runner/audit-log.js';
import { stateKeyOf, type Space } from '../state/index.js';
import type { RequestStore } from './RequestStore.js';
import type { SlackActor, SlackJobRunner } from './SlackJobs.js';
import { KeyedTimers } from '../runner/keyed-timers.js';
import { slackErrorCode } from './slack-error-code.js';
import { historyChannelOf, jobMessageLinkOf, truncate } from './slack-text.js';

/** Jobs a Home tab shows (Slack allows 100 blocks a view; each job takes two). */
const HOME_JOBS = 10;
/** Slack's limit on a section's text. */
const SECTION_TEXT = 3000;
/** Members of a workspace whose Home is kept up to date (the least recently seen go first), and for how long after they last opened it. */
const KEEP_VIEWERS = 500;
const VIEWER_TTL_MS = 24 * 60 * 60_000;
/** A change is shown after this pause, so a burst of changes costs one `views.publish`. */
const COALESCE_MS = 500;
/**
 * A forget's publish that Slack did not take (`ok: false`, such as its `internal_error`; a 5xx; a broken connection)
 * is tried again this many times, each after the audit log's own wait (`auditRetryWaitMs`: a minute, then twice as
 * long each time) — then given up (logged): the member's next open of their Home publishes it.
 */
export const FORGET_RETRIES = 4;
/**
 * How long a forget's publish waits, at most, for the member's own publishes already under way (their render, read
 * from the bots' state, and Slack's answer) before it is sent all the same; each one still under way then is followed,
 * once it ends, by the forget's publish again (the forget answers `retrying` then), so a view this process rendered
 * before the forget does not stay the last one once that publish is taken.
 */
export const FORGET_WAIT_MS = 10_000;

/**
 * What becomes of a forget's Home tab: `published` (Slack took it), `retrying` (Slack did not take it, or took it
 * while a view rendered before the forget may still reach it: it is sent again later), `next-open` (not sent, or not taken and not tried again: only the member's next open of their Home
 * publishes it).
 */
export type ForgetPublish = 'published' | 'retrying' | 'next-open';

export interface HomeTabsOptions {
  runner: SlackJobRunner;
  store: RequestStore;
  logger: LoggerLike;
  /** The app's main command as configured (`/imagine`): the how-tos, the refusals and the admins' repair name it (`/imagine admin set …`). */
  command: string;
  /** `views.publish` calls a minute, at most, a forget's aside (Slack's Tier 4: 100+ a minute per workspace). Default 100. */
  perMinute?: number | undefined;
  now?: (() => number) | undefined;
  /**
   * Who opened their Home lately, by workspace: the bots' state (`slack-home-viewers`), so a change reaches them on any
   * replica and after a restart. Default: this process's memory (tests).
   */
  viewers?: Pick<Space<HomeViewers>, 'get' | 'update'> | undefined;
  /** A workspace's client, to publish a Home its member opened through another replica or before a restart. */
  clientFor: (teamId: string) => Promise<webApi.WebClient | undefined>;
  /** Who a member is (as `/imagine` takes them: their admin rights, their language). */
  requesterOf: (actor: SlackActor) => Requester;
}

/** A workspace's members who opened their Home lately: when, where (their direct messages with the app), in which language. */
export type HomeViewers = Record<string, { seenAt: number; channelId: string; locale?: string | undefined }>;

interface Viewer {
  actor: SlackActor;
  requester: Requester;
  client: webApi.WebClient;
}

/**
 * Each member's Home tab in Slack (`views.publish`): their spend and budgets, their recent jobs with a thumbnail and
 * Reroll, the defaults that apply to them, and for admins the workspace's totals, top users and settings — in their
 * language, from the runner's ledger, history and rules (the same as `/imagine usage`, `history` and `admin settings`).
 * Published when a member opens it (`app_home_opened`) and again when what it shows changes — one of their jobs ends,
 * an admin changes the workspace's settings or budgets — for members who opened it lately (on any replica, before a
 * restart too: `viewers`); coalesced per member and
 * paced (Tier 4). After a member's `forget` it is published at once, opened lately or not (`forgotten`).
 */
export class HomeTabs {
  readonly #o: HomeTabsOptions;
  readonly #viewers: NonNullable<HomeTabsOptions['viewers']>;
  /** The changes still coalescing, by member: each one's publish. */
  readonly #pending = new KeyedTimers();
  /** The forgets' publishes that failed, waiting to be tried again, by member: each one's try. */
  readonly #retries = new KeyedTimers();
  readonly #publishing = new Set<Promise<unknown>>();
  /** Each member's publishes rendering or sending now (started, not queued for the pace): what a forget waits for. */
  readonly #rendering = new Map<string, Set<Promise<void>>>();
  readonly #limiter: Bottleneck;
  readonly #now: () => number;
  #stopping = false;
  /** The stop ended: nothing is sent any more. */
  #stopped = false;

  constructor(options: HomeTabsOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#viewers = options.viewers ?? memorySpace<HomeViewers>();
    const perMinute = options.perMinute ?? 100;
    this.#limiter = new Bottleneck({ maxConcurrent: 4, reservoir: perMinute, reservoirRefreshAmount: perMinute, reservoirRefreshInterval: 60_000 });
  }

  /** A member opened their Home: published now, and kept up to date for a while. */
  async opened(client: webApi.WebClient, actor: SlackActor, requester: Requester): Promise<void> {
    const now = this.#now();
    const seen = { seenAt: now, channelId: actor.channelId, locale: actor.locale?.slice(0, 35) };
    // The latest KEEP_VIEWERS of the workspace within the day, this member last; one that cannot be kept is still shown now.
    await this.#viewers
      .update(stateKeyOf(`slack:${actor.teamId}`), (viewers = {}) => {
        const recent = Object.entries(viewers).filter(([user, v]) => user !== actor.userId && now - v.seenAt <= VIEWER_TTL_MS);
        return Object.fromEntries([...recent.sort(([, a], [, b]) => a.seenAt - b.seenAt).slice(-(KEEP_VIEWERS - 1)), [actor.userId, seen]]);
      })
      .catch((error: unknown) => this.#o.logger.warn({ err: error, team: actor.teamId }, 'could not keep who opened a Home tab: their next changes do not reach it'));
    await this.#publishTo({ actor, requester, client });
  }

  /** What a member's Home shows changed (one of their jobs ended): published again if they opened it lately. */
  changed(teamId: string, userId: string): void {
    this.#soon(teamId, userId);
  }

  /**
   * A member asked `forget`: their Home is published again now, whether or not they opened it lately here — the view
   * Slack keeps shows their prompts (each job's line and its thumbnail's alt text) however long ago it was published,
   * by this process, another replica or one before a restart, and only a publish replaces it. It is sent at once, past
   * the pace (a forget is rare; a 429 is waited out by the client): never queued, so it goes before the queued changes
   * and no stop drops it. The member's publishes under way (rendering or sending) are waited for first, at most
   * `FORGET_WAIT_MS` (one still under way then is followed by this publish again once it ends, and the forget answers
   * `retrying`: that earlier view may reach Slack after this one), so none rendered here before the forget stays the
   * last once that publish is taken (another replica's publishes are not waited for); other members' and the ones still queued for the pace (rendered
   * when they run, after the forget) are not. Answers what becomes of it (`ForgetPublish`): when Slack did not take it, it is tried again
   * later (`FORGET_RETRIES`, on the audit log's waits; one sent before the member's publish under way ended, first once
   * that one ends) until it passes, the tries run out or the bot stops (each
   * logged) — `retrying`, unless the bot stops, when only the member's next open of their Home publishes it
   * (`next-open`, as for a forget asked after the stop).
   */
  async forgotten(client: webApi.WebClient, actor: SlackActor, requester: Requester): Promise<ForgetPublish> {
    if (this.#stopped) {
      // Nothing here sends it any more: the member's next open of their Home (another replica, the next start) does.
      this.#o.logger.warn({ team: actor.teamId }, 'did not publish a Home tab after a forget: the Home tabs have stopped');
      return 'next-open';
    }
    // This forget's publish replaces one an earlier forget still had to try again.
    this.#retries.drop(keyOf(actor));
    return this.#forgetPublish({ actor, requester, client }, 0, undefined);
  }

  /**
   * A forget's publish (its `attempt`-th retry, or 0; `lastWait`: the wait before it), once the member's own publishes
   * under way have ended or `FORGET_WAIT_MS` passed (each one still under way then is followed by this publish again
   * once it ends); tried again later when it failed.
   */
  async #forgetPublish(viewer: Viewer, attempt: number, lastWait: number | undefined): Promise<ForgetPublish> {
    // Under way from now on, while it waits for the member's own publishes too: a stop waits for it.
    const sent = (async () => {
      const earlier = Promise.allSettled([...(this.#rendering.get(keyOf(viewer.actor)) ?? [])]);
      const late = (await within(earlier, FORGET_WAIT_MS)) === LATE;
      if (late) this.#publishAgainAfter(viewer, earlier, attempt, lastWait);
      return { late, published: await this.#publishTo(viewer, true) };
    })();
    this.#track(sent);
    const { late, published } = await sent;
    // Taken, but the member's earlier view (with the prompts) may still reach Slack after it: only the publish that
    // follows that one replaces it for sure, so the member is told it is sent again shortly, not that it is done.
    if (published.ok) return late ? 'retrying' : 'published';
    // Sent before the member's own publish ended, it is sent again once that one ends (`#publishAgainAfter`): that
    // publish is its retry too, and the one tried again later if Slack does not take it — never a second path besides.
    // Unless the bot stops: nothing tries it again then, so the member is told `next-open`; whether it was given up is
    // `#publishAgainAfter`'s to log, once its publish is answered.
    if (late) return this.#stopping ? 'next-open' : 'retrying';
    return this.#retryLater(viewer, attempt, lastWait) ? 'retrying' : 'next-open';
  }

  /**
   * Tries a forget's failed publish again after the audit log's wait (`auditRetryWaitMs`); given up, and logged, once
   * its tries run out (`FORGET_RETRIES`) or a stop began. Answers whether it will be tried again.
   */
  #retryLater(viewer: Viewer, attempt: number, lastWait: number | undefined): boolean {
    const key = keyOf(viewer.actor);
    if (attempt >= FORGET_RETRIES || this.#stopping) {
      this.#o.logger.warn({ team: viewer.actor.teamId, tries: attempt + 1 }, 'gave up publishing a Home tab after a forget: the member’s next open of it publishes it');
      return false;
    }
    const wait = auditRetryWaitMs(lastWait);
    this.#retries.set(key, wait, () => void this.#forgetPublish(viewer, attempt + 1, wait));
    return true;
  }

  /**
   * A forget's publish sent before the member's own publishes under way (`earlier`) ended (`FORGET_WAIT_MS`): sent again
   * once they end, so theirs — rendered before the forget — is not the view Slack keeps. It is under way until then, so
   * a stop waits for it as for any forget's publish (the caller bounds the wait). It is the one retry of the publish it
   * follows, whether Slack took that one or not; when Slack does not take it, it is tried again as the forget's publish
   * it follows would be (its `attempt`, `lastWait`: no fresh count of tries).
   */
  #publishAgainAfter(viewer: Viewer, earlier: Promise<unknown>, attempt: number, lastWait: number | undefined): void {
    this.#o.logger.warn({ team: viewer.actor.teamId }, 'a forget’s Home tab did not wait longer for the member’s publish under way: it is published again once that one ends');
    this.#track(
      earlier.then(async () => {
        const published = await this.#publishTo(viewer, true);
        if (!published.ok) this.#retryLater(viewer, attempt, lastWait);
      }),
    );
  }

  /** What every Home of a workspace shows changed (its settings, its budgets): each recent viewer's is published again. */
  changedFor(teamId: string): void {
    if (this.#stopping) return;
    this.#track(
      this.#recentViewers(teamId).then(
        (viewers) => viewers.forEach(([userId]) => this.#soon(teamId, userId)),
        (error: unknown) => this.#o.logger.warn({ err: error, team: teamId }, 'could not read who opened a Home tab: the change reaches none now'),
      ),
    );
  }

  /** The workspace's members who opened their Home within the day, as the bots' state keeps them. */
  async #recentViewers(teamId: string): Promise<[string, HomeViewers[string]][]> {
    const viewers = (await this.#viewers.get(stateKeyOf(`slack:${teamId}`))) ?? {};
    return Object.entries(viewers).filter(([, v]) => this.#now() - v.seenAt <= VIEWER_TTL_MS);
  }

  /** Waits for the publishes under way and queued (tests). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#publishing]);
  }

  /**
   * Publishes at once the changes still coalescing and the forgets' publishes waiting to be tried again, then waits
   * until no publish is under way or queued (tests: what a member's Home shows once every change asked for has reached it).
   */
  async flush(): Promise<void> {
    this.#pending.runAll();
    this.#retries.runAll();
    while (this.#publishing.size > 0) await this.settled();
  }

  /**
   * Finishes the publishes in flight and drops the changes still waiting (coalescing, or queued for the pace): a stop
   * waits for no change after the ones Slack is answering, however slow Slack is. A dropped one shows what changed when
   * the member next opens their Home (it is published then), here or on another replica. A forget's publish is never
   * queued (`forgotten`): one under way, or asked during the stop, is waited for too; the caller bounds the wait. One
   * asked after the stop ended is not sent (it is logged): the member's next open of their Home shows it. A forget's
   * publish waiting to be tried again is given up (logged): the member's next open of their Home publishes it.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#pending.clear();
    if (this.#retries.size > 0) this.#o.logger.warn({ members: this.#retries.size }, 'gave up publishing Home tabs after a forget: the bot stops; each member’s next open of theirs publishes it');
    this.#retries.clear();
    // Bottleneck's stop waits for the jobs running.
    await this.#limiter.stop({ dropWaitingJobs: true }).catch(() => undefined);
    // A forget asked meanwhile is under way too: waited for until none is left.
    while (this.#publishing.size > 0) await this.settled();
    this.#stopped = true;
  }

  #soon(teamId: string, userId: string): void {
    const key = keyOf({ teamId, userId });
    if (this.#stopping || this.#pending.has(key)) return;
    this.#pending.set(key, COALESCE_MS, () => this.#track(this.#publish(teamId, userId)));
  }

  /** Publishes the member's Home again if they opened it within the day (on any replica), with their workspace's client. */
  async #publish(teamId: string, userId: string): Promise<void> {
    try {
      const seen = (await this.#recentViewers(teamId)).find(([user]) => user === userId)?.[1];
      const client = seen && (await this.#o.clientFor(teamId));
      if (!seen || !client || this.#stopping) return;
      const actor = { teamId, userId, channelId: seen.channelId, locale: seen.locale };
      await this.#publishTo({ actor, requester: this.#o.requesterOf(actor), client });
    } catch (error) {
      this.#o.logger.warn({ err: error, team: teamId }, 'could not read who opened a Home tab: a change did not reach theirs');
    }
  }

  /** Publishes a member's Home: paced, or at once for a forget (`forgotten`). Answers whether Slack took it, and if not why. */
  #publishTo(viewer: Viewer, forget = false): Promise<{ ok: true } | { ok: false; error: unknown }> {
    const publish = () =>
      this.#whileRendering(keyOf(viewer.actor), async () => {
        const view = await this.render(viewer.requester);
        await viewer.client.views.publish({ user_id: viewer.actor.userId, view });
      });
    const sent = (forget ? publish() : this.#limiter.schedule(publish)).then(
      () => ({ ok: true }) as const,
      (error: unknown) => {
        // Dropped by the stop, or asked after it: nothing failed.
        if (!(this.#stopping && error instanceof Bottleneck.BottleneckError)) this.#o.logger.warn({ code: slackErrorCode(error), team: viewer.actor.teamId }, 'could not publish a Home tab');
        return { ok: false, error } as const;
      },
    );
    this.#track(sent);
    return sent;
  }

  /** Known as under way (`settled`, `stop`) until it ends. */
  #track(sent: Promise<unknown>): void {
    this.#publishing.add(sent);
    void sent.finally(() => this.#publishing.delete(sent));
  }

  /** Runs a member's publish, known as under way until it ends. */
  #whileRendering(key: string, publish: () => Promise<void>): Promise<void> {
    const running = publish();
    const ofMember = this.#rendering.get(key) ?? new Set();
    this.#rendering.set(key, ofMember.add(running));
    const forget = () => {
      ofMember.delete(running);
      if (ofMember.size === 0 && this.#rendering.get(key) === ofMember) this.#rendering.delete(key);
    };
    running.then(forget, forget);
    return running;
  }

  /** A member's Home view, in their language. */
  async render(requester: Requester): Promise<types.HomeView> {
    const { runner, store } = this.#o;
    const locale = requester.locale;
    const bold = { bold: (text: string) => `*${text}*` };
    // A job that just ended is in the history once its write is through.
    await runner.history?.settled();
    const [summary, settings, mine, entries] = await Promise.all([
      runner.budgets.summary(requester),
      runner.policy.effective(requester),
      runner.members.view(requester),
      runner.history ? runner.history.mine(requester) : Promise.resolve([] as HistoryEntry[]),
    ]);
    // While a rule cannot be read every job is refused: that (naming the app's own command), not the limits that would
    // apply otherwise — and to an admin not at all here: their section below says it above the rules that cannot be read.
    const refused = unreadableRulesRefusal(settings);
    const scopeDefaults = refused
      ? requester.isAdmin
        ? undefined
        : describeFailure(refused, locale, this.#o.command).message
      : say(locale, 'slack.home.defaults', {
          size: settings.defaultSize.value,
          // What the member gets, as the policy decides it: `high` only where the `high-quality` list names them.
          quality: defaultQualityFor(requester, settings),
          previews: settings.defaultPreviews.value,
          maxImages: settings.maxImages.value,
          qualities: anyOf(qualitiesFor(requester, settings)),
          sizes: anyOf(settings.sizes.value),
        });
    // Whether this member may make images, by the rules of who `/imagine` is held to (the Home is in no channel: the
    // policy is asked about the member alone): a refused member is told why, not invited to make images (rules that
    // cannot be read are told above); where they may, the workspace's channels, is said apart: one limited to some is told which.
    const allowedChannels = settings.channels.value;
    const whoWhere = await runner.policy.whoRefusal(requester);
    const cannot = whoWhere && !refused ? describeFailure(whoWhere, locale, this.#o.command).message : undefined;
    const where = allowedChannels.length > 0 ? { where: 'some', channels: listOf(allowedChannels.slice(0, 10).map((id) => `<#${id}>`)) } : { where: 'any', channels: '' };
    const blocks: types.KnownBlock[] = [
      { type: 'header', text: { type: 'plain_text', text: say(locale, 'slack.home.usage_header') } },
      section(describeUsage(summary, bold, locale, this.#o.command)),
      { type: 'divider' },
      { type: 'header', text: { type: 'plain_text', text: say(locale, 'slack.home.history_header') } },
    ];
    if (entries.length === 0) blocks.push(section(whoWhere ? say(locale, 'slack.home.history_none') : say(locale, 'slack.home.history_empty', { command: `\`${this.#o.command}\``, ...where })));
    for (const [i, entry] of entries.slice(0, HOME_JOBS).entries()) {
      const request = await store.get(entry.key).catch(() => undefined);
      const thumbnail = request?.outputFiles[0];
      const link = request && jobMessageLinkOf(request);
      const line = say(locale, 'slack.history.line', {
        rank: i + 1,
        when: `<!date^${Math.floor(entry.at / 1000)}^{date_short_pretty} {time}|${new Date(entry.at).toISOString()}>`,
        author: '',
        channel: historyChannelOf(entry, 'mine'),
        prompt: truncate(entry.prompt, 80).replace(/[\n`<>&]/g, ' '),
        ...historyLineValues(entry),
        hasLink: link ? 'yes' : 'no',
        link: link ?? '',
      });
      blocks.push({
        type: 'section',
        block_id: `job.${i}`,
        text: { type: 'mrkdwn', text: truncate(line, SECTION_TEXT) },
        ...(thumbnail
          ? { accessory: { type: 'image', slack_file: { id: thumbnail.id }, alt_text: truncate(say(locale, 'slack.home.thumbnail', { prompt: entry.prompt }), 2000) } }
          : {}),
      } as types.KnownBlock);
      blocks.push({
        type: 'actions',
        block_id: `job.${i}.actions`,
        elements: [{ type: 'button', action_id: ACTIONS.reroll, text: { type: 'plain_text', text: say(locale, 'button.reroll') }, value: entry.key }],
      });
    }
    blocks.push(
      { type: 'divider' },
      { type: 'header', text: { type: 'plain_text', text: say(locale, 'slack.home.defaults_header') } },
      // The member's own defaults (as `/imagine settings` shows them), then the workspace's and what it allows.
      section(describeOwnDefaults(mine, settings, locale, bold)),
      ...(scopeDefaults === undefined ? [] : [section(scopeDefaults)]),
      section(describeHowToChange({ change: `\`${this.#o.command} settings --size 1536x1024 --private on\``, clear: `\`${this.#o.command} settings clear size\`` }, locale)),
    );
    if (requester.isAdmin) {
      blocks.push(
        { type: 'divider' },
        { type: 'header', text: { type: 'plain_text', text: say(locale, 'slack.home.admin_header') } },
        section(describeSettings(settings, `\`${this.#o.command} admin set SETTING VALUE\``, locale, this.#o.runner.audit.trouble(requester), this.#o.command)),
      );
    }
    const how = whoWhere
      ? [...(cannot === undefined ? [] : [cannot]), say(locale, 'slack.home.only_you')].join(' ')
      : say(locale, 'slack.home.how', { command: `\`${this.#o.command}\``, ...where });
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: how }] });
    return { type: 'home', callback_id: 'pictor_home', blocks };
  }
}

function keyOf(actor: Pick<SlackActor, 'teamId' | 'userId'>): string {
  return `${actor.teamId}:${actor.userId}`;
}

function section(text: string): types.KnownBlock {
  return { type: 'section', text: { type: 'mrkdwn', text: truncate(text, SECTION_TEXT) } };
}
