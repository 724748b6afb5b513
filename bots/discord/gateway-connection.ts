import { SimpleIdentifyThrottler, SimpleShardingStrategy, type IIdentifyThrottler, type WebSocketManager } from '@discordjs/ws';
import { Events, GatewayCloseCodes, type Client, type WebSocketOptions } from 'discord.js';
import { ValidationError, type LoggerLike } from 'pictor';
import { scrubSecrets, withTimeout } from 'pictor/internal';
import { GatewayLease, gatewayLeaseKey, type GatewayLeaseOptions } from './gateway-lease.js';
import { discordRefusedToken, tokenRefused } from './unreachable.js';
import type { StopBudget } from '../runner/stop-once.js';

export interface GatewayConnectionOptions {
  /**
   * Makes the discord.js client of one gateway login, with the bot's handlers attached, from the `ws` options given
   * (they keep a client that left off the gateway for good). Called for each login: discord.js cannot log a client in
   * again once it was destroyed, so none is.
   */
  newClient(ws: WebSocketOptions): Client;
  token: string;
  /** How long to wait for Discord's READY at login. */
  loginTimeoutMs: number;
  /** How long leaving waits for discord.js to close its gateway connection (a close handshake: milliseconds). Default 5 s. */
  leaveTimeoutMs?: number | undefined;
  /** With several processes on one Redis: connect only while holding this lease. */
  lease?: Omit<GatewayLeaseOptions, 'logger'> | undefined;
  /**
   * Called once, with what the operator must change, when the bot can no longer run after `start()` resolved: Discord
   * refused the token as a standby took over (the gateway closed its login with 4004, or a 401), closed the live
   * session with 4004 (the token was reset since), or refused a request made with it (`tokenRefusedOverRest`) — then
   * `tokenRefused`'s error, naming DISCORD_TOKEN, the one a refused token at `start()` rejects with; or Discord closed
   * the live session for another reason discord.js never recovers from (4010 to 4014: `closedForGood`). It is off the
   * gateway, has given the lease back and stands by no more. The first of these is the one: none is told after it. One
   * error line comes before it: `why` (as `discordRefusedToken` says it, or the close), and `role`, where this process
   * was on the gateway (`GatewayRole`: a takeover refused over REST is the takeover's line, not one of leaving).
   */
  onFatal?: ((error: ValidationError) => void) | undefined;
  logger: LoggerLike;
}

export interface GatewayConnection {
  /**
   * Logs in (rejects when that fails), or, when another process holds the lease, stands by and returns. A token Discord
   * refused (a 401, or the gateway closing the login with 4004) rejects with `tokenRefused`'s error, naming
   * DISCORD_TOKEN (a setting to change); the lease is given back either way.
   */
  start(): Promise<void>;
  /**
   * Connected, or standing by for the lease (a healthy state); false once Discord refused the token after `start()`, or
   * closed the live session for good.
   */
  online(): boolean;
  /**
   * Discord refused the token to a request made with it, over REST (a 401: `how`, as `discordRefusedToken` says it):
   * off the gateway, the lease given back, standing by no more, then `onFatal` with `tokenRefused`'s error, as when the
   * gateway refuses it. Its error line's `role` is where this process is as the refusal comes: leaving the gateway it
   * holds, taking it over (the login's own request refused, or another while it logs in), or standing by. Nothing when
   * the bot can no longer run already (the first reason is the one), and only `onFatal` while it leaves (the leave does
   * the rest).
   */
  tokenRefusedOverRest(how: string): Promise<void>;
  /** The client of the current login (or of the last one, after it left); undefined before the first. */
  client(): Client | undefined;
  /** Whether `leave()` should come before the replies in flight are waited for (a standby can take over meanwhile). */
  readonly leased: boolean;
  /**
   * Off the gateway, then the lease given up (in that order: never two processes connected). Once: a later call gets
   * the first one's end. With a stop's budget (`stopOnce`), the waits on Redis (the standby mark and the lease given
   * back) end by its deadline at the latest — read as each begins, and one brought forward later cuts those under way
   * — and the call resolves by then even when an earlier call's leave goes on. The first disconnect is waited whole.
   */
  leave(stop?: StopBudget): Promise<void>;
  /**
   * At drain start (with a lease): `leave()` as soon as another process stands by for the lease (at once if one
   * does), so it takes the new interactions. Until then, and for a lone process, stays connected: new commands are
   * told the bot is restarting rather than not answered at all. A standby itself stops standing by. Resolves once the
   * first check is done.
   */
  handOver(): Promise<void>;
}

/** How long leaving waits for discord.js to close its gateway connection, by default. */
const LEAVE_TIMEOUT_MS = 5_000;

/** discord.js's own identify throttle (Discord's `max_concurrency` identifies per 5 s). */
const DEFAULT_THROTTLER = async (manager: WebSocketManager): Promise<IIdentifyThrottler> =>
  new SimpleIdentifyThrottler((await manager.fetchGatewayInformation()).session_start_limit.max_concurrency);

/**
 * What the operator must change when Discord closes a live session with a code discord.js never recovers from (its
 * `ShardDisconnect`, sent for those alone: 4004 and 4010 to 4014), but the token's 4004 (`discordRefusedToken`): the
 * setting at fault, and the cause, named.
 */
export function closedForGood(code: number): ValidationError {
  const closed = (param: string, name: string, fix: string) => new ValidationError(param, `Discord closed the gateway session for good (${code} ${name}): ${fix}`);
  switch (code) {
    case GatewayCloseCodes.InvalidShard:
      return closed('DISCORD_INTERACTIONS_PORT', 'Invalid shard', 'Discord does not take the one shard this bot runs as; a bot in 2,500 servers or more takes interactions over HTTP (DISCORD_INTERACTIONS_PORT)');
    case GatewayCloseCodes.ShardingRequired:
      return closed('DISCORD_INTERACTIONS_PORT', 'Sharding required', 'the bot is in too many servers (2,500 or more) for the one gateway connection it runs; take interactions over HTTP (DISCORD_INTERACTIONS_PORT)');
    case GatewayCloseCodes.InvalidAPIVersion:
      return closed('discord.js', 'Invalid API version', 'Discord no longer serves the gateway version this discord.js speaks; update Pictor');
    case GatewayCloseCodes.InvalidIntents:
      return closed('intents', 'Invalid intents', 'Discord did not take the gateway intents the bot asked for; check its intents in the Developer Portal (Bot → Privileged Gateway Intents)');
    case GatewayCloseCodes.DisallowedIntents:
      return closed('intents', 'Disallowed intents', 'the bot asked for a privileged intent it is not allowed; enable it in the Developer Portal (Bot → Privileged Gateway Intents)');
    default:
      return closed('discord.js', 'unrecoverable', 'discord.js does not connect again after it; check the bot in the Developer Portal, or update Pictor');
  }
}

/**
 * Where a process that can no longer run was on the gateway, the `role` of the one error line it logs then: connected
 * (`holder`: it leaves the gateway), logging in to take it over (`taking over`), or waiting for the lease (`standby`:
 * it never joined, and stands by no more).
 */
export type GatewayRole = 'holder' | 'taking over' | 'standby';

/** What a process logs when Discord refused the token as it took the gateway over (a 4004 closing its login, or a 401). */
const REFUSED_TAKING_OVER = 'Discord did not accept the bot token when taking over the gateway; standing by no more: check DISCORD_TOKEN';

/** One gateway login: its client, and whether it left (a client that left is never on the gateway again). */
interface Login {
  client: Client;
  /**
   * Set by the first disconnect, as it begins: the login left (set), and when its client is off the gateway (ends then;
   * a later disconnect waits for it too).
   */
  leaving?: Promise<void>;
  /** Ends the login's wait for READY when it leaves first. */
  abandon(): void;
  /** Called when discord.js tries to connect the client again after it left (its connection is closed by then). */
  keptOff(): void;
}

/**
 * The `ws` options of a login's client. discord.js's shard, destroyed while it waits for Discord's HELLO or READY,
 * starts a retry of its own (about 500 ms later) that no later destroy stops: every connection attempt of a client
 * that left is held before it opens a socket, so that retry never reaches Discord. The identify throttle is one for
 * every login of this process, so a client made anew waits for Discord's identify rate as the one before did.
 */
function loginWs(login: Pick<Login, 'leaving' | 'keptOff'>, throttle: (manager: WebSocketManager) => Promise<IIdentifyThrottler>, logger: LoggerLike): WebSocketOptions {
  return {
    buildIdentifyThrottler: throttle,
    buildStrategy(manager) {
      const retrieve = manager.options.retrieveSessionInfo;
      Object.assign(manager.options, {
        retrieveSessionInfo: (shardId: number) => {
          if (login.leaving === undefined) return retrieve(shardId);
          logger.debug({ shardId }, 'discord.js tried to connect a gateway client that left; kept off');
          login.keptOff();
          return new Promise<never>(() => {});
        },
      });
      return new SimpleShardingStrategy(manager);
    },
  };
}

/**
 * The bot's gateway connection. Without a lease: log in, stay connected. With
 * one (see gateway-lease.ts): connect only while holding it, disconnect at once
 * when it is lost, and wait to take it (again) otherwise. Each login has a client
 * of its own (`newClient`); one that left is never logged in again.
 */
export function gatewayConnection(options: GatewayConnectionOptions): GatewayConnection {
  const { token, logger } = options;
  const lease = options.lease ? new GatewayLease({ ...options.lease, key: options.lease.key ?? gatewayLeaseKey(token, options.lease.prefix), logger }) : undefined;
  let holding = false;
  let leaving = false;
  /** The current login, or the last one (then left). */
  let current: Login | undefined;
  let throttler: Promise<IIdentifyThrottler> | undefined;
  /**
   * The close code of the last gateway connection discord.js gave up on (`ShardDisconnect`, reported before the login
   * rejects): 4004 is Discord refusing the token, which the login's own error ("Authentication failed") does not say by a
   * code. Of the current login only: forgotten as each login begins, so a 4004 seen before a session that worked never
   * decides a later login's error.
   */
  let unrecoverableCloseCode: number | undefined;
  /**
   * Set once Discord refused the token after `start()` (at a takeover, or closing the live session), or closed the live
   * session for good: this process stands by no more.
   */
  let gaveUp = false;
  // A throttle whose making failed (Discord's gateway information not fetched) is forgotten, so the next login asks again
  // instead of failing with the same error for ever.
  const throttle = (manager: WebSocketManager) =>
    (throttler ??= DEFAULT_THROTTLER(manager).catch((error: unknown) => {
      throttler = undefined;
      throw error;
    }));

  /** A new client logged in, READY; when that fails (or it left meanwhile), it is off the gateway and this rejects. */
  const connect = async () => {
    let abandon!: (error: Error) => void;
    const abandoned = new Promise<never>((_resolve, reject) => (abandon = reject));
    const login = { abandon: () => abandon(new Error('left the gateway while logging in')), keptOff: () => {} } as Login;
    login.client = options.newClient(loginWs(login, throttle, logger));
    current = login;
    unrecoverableCloseCode = undefined;
    // A client that left (an abandoned login's) may still report its close: only the current login's counts.
    login.client.on(Events.ShardDisconnect, (event) => {
      if (current !== login) return;
      unrecoverableCloseCode = event.code;
      // The live session closed with a code discord.js never recovers from (discord.js reports only those): nothing here
      // would ever connect again while the lease is renewed. Stopped as a refused token at a takeover is, the token
      // named only for its own 4004 (reset while it runs).
      if (!holding || leaving || gaveUp) return;
      const refused = discordRefusedToken(undefined, event.code);
      if (refused) {
        void stopForGood(tokenRefused(refused), refused, 'holder', 'Discord no longer accepts the bot token (it closed the gateway session); leaving the gateway: check DISCORD_TOKEN');
        return;
      }
      const closed = closedForGood(event.code);
      void stopForGood(closed, closed.message, 'holder', 'Discord closed the gateway session for good; leaving the gateway');
    });
    const ready = new Promise<unknown>((resolve) => login.client.once(Events.ClientReady, resolve));
    try {
      await withTimeout(Promise.race([Promise.all([login.client.login(token), ready]), abandoned]), options.loginTimeoutMs, 'Discord did not send READY in time');
    } catch (error) {
      await disconnect(login);
      throw error;
    }
  };
  /**
   * How Discord refused the token, when `error` (a failed login) is that (`discordRefusedToken`), counting the close
   * code discord.js reported for this login: a 4004 seen before a session that worked does not decide a later error.
   */
  const refusedToken = (error: unknown) => discordRefusedToken(error, unrecoverableCloseCode);
  /**
   * The login off the gateway (the current one by default). discord.js's destroy never ends when called while its
   * connection waits for Discord's HELLO or READY (a login under way): the retry it starts for that wait takes away
   * the close handler the destroy waits on, and tries again after the connection closed. So leaving ends when the
   * destroy does or when that try comes (and is kept off), and is waited for a bounded time.
   */
  const disconnect = (login = current): Promise<void> => {
    if (!login) return Promise.resolve();
    // A second disconnect (the bot stops while a lost lease's disconnect is under way) ends when the first does: the
    // lease is given back only once this process is off the gateway.
    return (login.leaving ??= leaveGateway(login));
  };
  // Becomes the login's `leaving` at its first await: nothing before it (abandon, the destroy begun) asks to connect the client.
  const leaveGateway = async (login: Login) => {
    login.abandon();
    const { client } = login;
    const leaveTimeoutMs = options.leaveTimeoutMs ?? LEAVE_TIMEOUT_MS;
    const keptOff = new Promise<true>((resolve) => (login.keptOff = () => resolve(true)));
    const destroyed = client.destroy().then(
      () => true as const,
      () => true as const,
    );
    if (!(await withTimeout(Promise.race([destroyed, keptOff]), leaveTimeoutMs, 'destroy did not end').catch(() => false))) {
      logger.warn({ waitedMs: leaveTimeoutMs }, 'discord.js did not say it left the gateway in time; going on without it');
    }
  };
  /** Set while `connectHolding` logs in: a lease lost meanwhile is then its to handle. */
  let connecting: { lost: boolean } | undefined;
  /** Where this process is on the gateway now: logging in (a takeover, once `start()` resolved), connected, or neither. */
  const roleNow = (): GatewayRole => (connecting ? 'taking over' : holding ? 'holder' : 'standby');
  const onLost = (why: string) => {
    holding = false;
    logger.error({ why }, 'lost the Discord gateway lease; disconnecting from the gateway');
    if (connecting) {
      connecting.lost = true;
      void disconnect();
      return;
    }
    void disconnect().then(standBy);
  };
  /**
   * Logs in while renewing the lease (a login may take longer than the lease lives); false when the lease was lost
   * meanwhile, and the client is off the gateway again. Rejects when the login fails.
   */
  const connectHolding = async (): Promise<boolean> => {
    const attempt = { lost: false };
    connecting = attempt;
    lease?.keep(onLost);
    try {
      await connect();
    } catch (error) {
      // Off the gateway already: the lease was lost, or the bot began to stop, while the login went on.
      if (attempt.lost || leaving) return false;
      throw error;
    } finally {
      connecting = undefined;
    }
    // The lease was lost, the bot began to stop, or it gave up, while the login went on: off the gateway again (stopping,
    // `leave()` gives the lease back; giving up, its caller does).
    if (attempt.lost || leaving || gaveUp) {
      await disconnect();
      return false;
    }
    holding = true;
    return true;
  };
  /**
   * Discord refused the token, or closed the session for good (never right by retrying, and Discord counts every
   * refused identify): the lease no longer renewed (nor lost meanwhile: a renewal failing while the disconnect goes on
   * is not a second error), off the gateway, the lease given back, standing by no more, then `onFatal(error)`, as a
   * refused token at start stops the bot. Once: the first reason is the one. While the bot leaves, the leave takes it off
   * the gateway and gives the lease back; the reason is still told.
   */
  const stopForGood = async (error: ValidationError, why: string, role: GatewayRole, message: string) => {
    if (gaveUp) return;
    gaveUp = true;
    holding = false;
    if (!leaving) {
      const leaseStopped = lease?.stop();
      await disconnect();
      await lease?.release();
      await leaseStopped;
    }
    logger.error({ why, role }, message);
    options.onFatal?.(error);
  };
  const standBy = () => {
    if (!lease || leaving || gaveUp) return;
    logger.info({ takeoverWithinMs: lease.takeoverWithinMs }, 'another process holds the Discord gateway; standing by');
    void (async () => {
      /**
       * Given up while taking over (Discord refused the token to a request of the bot's): that stop left the gateway and
       * gave the lease back as things stood then; done again once this login ended, so neither outlives it.
       */
      const giveUpTakeover = async () => {
        await disconnect();
        await lease.release();
      };
      while (await lease.acquire()) {
        // Taken by a try under way as the bot began to stop or gave up (`acquire` returns what that try found): given
        // back, never logged in with.
        if (leaving || gaveUp) return lease.release();
        try {
          const connected = await connectHolding();
          if (gaveUp) return await giveUpTakeover();
          if (!connected) continue;
          logger.info({}, 'took over the Discord gateway');
          return;
        } catch (error) {
          if (gaveUp) return await giveUpTakeover();
          const refused = refusedToken(error);
          if (refused) return await stopForGood(tokenRefused(refused), refused, 'taking over', REFUSED_TAKING_OVER);
          await disconnect();
          await lease.release();
          const message = scrubSecrets(error instanceof Error ? error.message : String(error), [token]);
          logger.error({ err: { message } }, 'could not connect to the Discord gateway after taking the lease; giving it up for now');
          await new Promise((resolve) => setTimeout(resolve, lease.takeoverWithinMs));
        }
      }
    })();
  };

  let left: Promise<void> | undefined;
  /** The first leave's disconnect from the gateway, which every later leave waits for whole too. */
  let disconnected: Promise<void> | undefined;
  const leaveOnce = async (stop: StopBudget | undefined) => {
    leaving = true;
    // Each wait on Redis by the stop's deadline too (the lease's stop and release take the stop's budget).
    // A standby's mark is gone before this resolves: a holder draining next does not count on this process.
    const stopped = lease?.stop(stop);
    disconnected = disconnect();
    await disconnected;
    await stopped;
    // Given back whether or not this process thinks it holds it (a lease it gave up as unconfirmed may still be its
    // own in Redis until it expires): the release only deletes the lease if it is this process's.
    await lease?.release(stop);
    holding = false;
  };
  const connection: GatewayConnection = {
    leased: lease !== undefined,
    async start() {
      if (lease && !(await lease.tryAcquire().catch(() => false))) {
        standBy();
        return;
      }
      let connected: boolean;
      try {
        connected = await connectHolding();
      } catch (error) {
        await lease?.release();
        // A token Discord refused is a setting to change, named; Discord out of reach may answer next time.
        const refused = refusedToken(error);
        throw refused ? tokenRefused(refused) : error;
      }
      if (!connected) standBy();
    },
    online: () => !gaveUp && (lease && !holding ? !leaving : current?.client.isReady() === true),
    tokenRefusedOverRest(how) {
      // Told as where this process is on the gateway: a takeover's login refused over REST (its GET /gateway/bot, before
      // any IDENTIFY) is the takeover's refusal, as a 4004 closing that login is; a standby has no gateway to leave.
      const role = roleNow();
      const message =
        role === 'taking over'
          ? REFUSED_TAKING_OVER
          : `Discord refused a request made with the bot token; ${role === 'holder' ? 'leaving the gateway' : 'standing by no more'}: check DISCORD_TOKEN`;
      return stopForGood(tokenRefused(how), how, role, message);
    },
    client: () => current?.client,
    async handOver() {
      if (!lease || leaving) return;
      if (!holding) return connection.leave();
      const leaveToStandby = () => {
        logger.info({}, 'another process stands by for the Discord gateway; leaving it to that one');
        return connection.leave();
      };
      if (await lease.standbyWaiting()) return leaveToStandby();
      logger.info({}, 'no other process stands by for the Discord gateway; staying connected until one does');
      void (async () => {
        while (!leaving) {
          await new Promise((resolve) => setTimeout(resolve, lease.pollEveryMs).unref());
          if (!leaving && (await lease.standbyWaiting())) return leaveToStandby();
        }
      })();
    },
    leave(stop) {
      // Once: a later call (a leased bot leaves before its replies' grace and again after it) gets the first one's end,
      // and the lease is stopped and given back once — not waited for and logged twice while Redis is unreachable.
      // The first leave's disconnect is waited for whole, deadline or not, by every leave: a stopped bot is off the
      // gateway when its stop resolves (discord.js's destroy is bounded by its own 5 s; past the process's deadline, its
      // exit closes the socket).
      const first = left === undefined;
      const theLeave = (left ??= leaveOnce(stop));
      if (first || stop === undefined) return theLeave;
      // Begun earlier (a hand-over at drain, which has no deadline, or this stop's first leave): once off the gateway,
      // the rest (the lease's waits on Redis) is not waited for past this stop's deadline.
      return (async () => {
        await disconnected;
        await stop.within(theLeave, Number.POSITIVE_INFINITY);
      })();
    },
  };
  return connection;
}
