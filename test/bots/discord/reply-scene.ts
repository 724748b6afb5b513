import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { REST, type RESTOptions } from 'discord.js';
import type { OutgoingFile } from '../../../bots/discord/fit-images.js';
import { ReplyTarget, type ReplyTargetOptions } from '../../../bots/discord/ReplyTarget.js';
import { makeRequestWithEncodedForms, withPostsSentOnce } from '../../../bots/discord/rest-request.js';
import { FakeDiscord, type FakeDiscordOptions, type FakeInteraction, type FakeMessage } from '../../fakes/discord/FakeDiscord.js';
import type { InteractionContext } from '../../fakes/discord/interaction-payloads.js';
import { RecordingLogger } from './harness.js';


/**
 * What the tests of a job's reply (`ReplyTarget`, and `JobView` through it) share: a Discord, and REST clients to it
 * as the bot has them — one for interaction webhooks, one with the bot token — with no bot running.
 */

export const MiB = 1024 * 1024;

export interface SceneOptions extends FakeDiscordOptions {
  /** How the webhook client reaches Discord (default: as the bot does): a test may put a network failure in its way. */
  webhookRequest?: RESTOptions['makeRequest'] | undefined;
  /** How the client with the bot token reaches Discord (default: as the bot does). */
  botRequest?: RESTOptions['makeRequest'] | undefined;
}

/** A test's Discord, and REST clients to it as the bot has them: one for interaction webhooks, one with the bot token. */
export class Scene {
  readonly logger = new RecordingLogger();
  private constructor(
    readonly discord: FakeDiscord,
    readonly webhookRest: REST,
    readonly botRest: REST,
    private readonly endpoint: Server,
  ) {}

  static async start(options: SceneOptions = {}): Promise<Scene> {
    const { webhookRequest, botRequest, ...discordOptions } = options;
    // Discord's per-token and per-channel message limits are not what these tests are about.
    const discord = await FakeDiscord.start({ messageRateLimit: { limit: 100, windowMs: 1000 }, ...discordOptions });
    // The app's interactions endpoint: it defers every interaction (callback type 5), as a job's first answer does.
    const endpoint = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 5 })));
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    discord.interactionsEndpoint = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/interactions`;
    // Each post is sent once, as the bot's clients send it (`withPostsSentOnce`); a test's way to Discord sits under that.
    const rest = (makeRequest = makeRequestWithEncodedForms) => new REST({ api: discord.apiBaseUrl, timeout: 60_000, makeRequest: withPostsSentOnce(makeRequest) });
    return new Scene(discord, rest(webhookRequest), rest(botRequest).setToken(discord.botToken), endpoint);
  }

  /** A member's /imagine, deferred as a job's is: its reply says "thinking…" until a target edits it. */
  async deferred(where: Partial<InteractionContext> = {}): Promise<FakeInteraction> {
    const ix = this.discord.slashCommand('imagine', { prompt: 'herons' }, where);
    await this.discord.waitFor(() => ix.ack, 'the interaction to be deferred');
    return ix;
  }

  targetOf(ix: FakeInteraction, options: Partial<ReplyTargetOptions> = {}): ReplyTarget {
    return new ReplyTarget({
      webhookRest: this.webhookRest,
      botRest: this.botRest,
      applicationId: this.discord.applicationId,
      token: ix.token,
      issuedAt: ix.createdAt,
      channelId: ix.channelId,
      userId: ix.user.id,
      locale: 'en-US',
      fallback: 'channel',
      logger: this.logger,
      ...options,
    });
  }

  /** The messages the interaction's token posted after its reply (its follow-ups), oldest first. */
  followUpsOf(ix: FakeInteraction): FakeMessage[] {
    return [...this.discord.messages.values()].filter((m) => m.interactionId === ix.id && m.id !== ix.originalMessageId);
  }

  /** The messages the bot posted in the channel with its own token (no interaction's), oldest first. */
  postedInChannel(): FakeMessage[] {
    return this.discord.channelMessages().filter((m) => m.interactionId === undefined);
  }

  /** The name of every file the bot has in Discord, once for each time it is there. */
  uploadedNames(): string[] {
    return [...this.discord.messages.values()].flatMap((m) => m.attachments.map((a) => a.filename)).sort();
  }

  /** Requests with the interaction's token that Discord refused with `code`. */
  refusedWith(ix: FakeInteraction, code: number): number {
    return this.discord.requests.filter((r) => r.token === ix.token && r.code === code).length;
  }

  async close(): Promise<void> {
    for (const rest of [this.webhookRest, this.botRest]) {
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
    }
    await this.discord.close();
    await new Promise((resolve) => this.endpoint.close(resolve));
  }
}

/** `count` images of `bytes` each (what they hold does not matter unless Discord refuses one alone). */
export function images(count: number, bytes: number, from = 1): OutgoingFile[] {
  return Array.from({ length: count }, (_, i) => ({ name: `pictor-k-${from + i}.png`, data: randomBytes(bytes), contentType: 'image/png' }));
}

export function namesOf(files: readonly OutgoingFile[]): string[] {
  return files.map((f) => f.name).sort();
}

export { keyOf, notesOf } from '../../helpers/message-keys.js';
