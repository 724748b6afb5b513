import { webApi, type Context } from '@slack/bolt';

/** One workspace the bot serves: its bot token, a Web API client with that token, and the bot's user id there. */
export interface Workspace {
  client: webApi.WebClient;
  /** For the Web API and downloads from Slack's file hosts only; never logged. */
  botToken: string;
  botUserId: string;
}

/** Clients kept at once; the least recently used goes first (a new one is cheap). */
const MAX_CLIENTS = 500;

/**
 * The Web API client of each bot token, made once and reused. With one bot
 * token there is one; with OAuth, one per installed workspace, each taking
 * its token from what Bolt's `authorize` found for the request.
 */
export class WorkspaceClients<Client extends webApi.WebClient = webApi.WebClient> {
  readonly #clients = new Map<string, Client>();
  readonly #make: (token: string) => Client;

  constructor(make: (token: string) => Client) {
    this.#make = make;
  }

  client(token: string): Client {
    let client = this.#clients.get(token);
    if (client) this.#clients.delete(token);
    else client = this.#make(token);
    this.#clients.set(token, client);
    for (const key of this.#clients.keys()) {
      if (this.#clients.size <= MAX_CLIENTS) break;
      this.#clients.delete(key);
    }
    return client;
  }

  /** The workspace a request came from, from Bolt's `context` (set by `authorize`). */
  of(context: Context): Workspace {
    const { botToken, botUserId } = context;
    // Every listener of this app is for a bot: an authorized request without a bot token is a set-up mistake.
    if (!botToken || !botUserId) throw new Error('Slack authorized a request without a bot token for its workspace');
    return { client: this.client(botToken), botToken, botUserId };
  }

  /** Forgets a token's client (its workspace uninstalled the app or revoked the token). */
  forget(token: string): void {
    this.#clients.delete(token);
  }
}
