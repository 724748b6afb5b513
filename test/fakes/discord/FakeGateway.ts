import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { realTimers } from '../../helpers/real-clock-wait.js';

const OP_DISPATCH = 0;
const OP_HEARTBEAT = 1;
const OP_IDENTIFY = 2;
const OP_RESUME = 6;
const OP_INVALID_SESSION = 9;
const OP_HELLO = 10;
const OP_HEARTBEAT_ACK = 11;
const CLOSE_AUTHENTICATION_FAILED = 4004;

interface Session {
  id: string;
  seq: number;
  socket: WebSocket | undefined;
}

export interface GatewayOptions {
  botToken: string;
  heartbeatIntervalMs: number;
  /** READY's `d`, without `session_id` / `resume_gateway_url`. */
  readyData: () => Record<string, unknown>;
  /** The URL sessions resume at (READY's `resume_gateway_url`). */
  resumeUrl: () => string;
}

export interface GatewayStats {
  connections: number;
  /** IDENTIFYs taken (answered with READY). */
  identifies: number;
  /** IDENTIFYs and RESUMEs closed with 4004 Authentication failed (a token Discord does not accept): each counts against the bot. */
  refusedIdentifies: number;
  resumes: number;
  heartbeats: number;
  dispatches: number;
  /** The most sessions connected at once so far (a bot connected twice gets every interaction twice). */
  mostOpenSessions: number;
  /** How many times a second session came while one was connected. */
  overlaps: number;
  /** The longest time two sessions or more were connected at once, in ms (`Date.now()` at each identify, resume and close). */
  longestOverlapMs: number;
  /** How many times the last connected session left (an interaction sent then reaches nobody). */
  emptied: number;
}

/**
 * The gateway half of the fake: HELLO on connect, IDENTIFY → READY (token
 * checked), RESUME → RESUMED, heartbeats acknowledged, and dispatches with
 * increasing sequence numbers. JSON encoding, no compression (what discord.js
 * asks for without zlib-sync).
 */
export class FakeGateway {
  readonly #options: GatewayOptions;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #sessions = new Map<string, Session>();
  readonly #readyWaiters: (() => void)[] = [];
  /** Set by `refuseIdentifies`: every IDENTIFY is closed with 4004, whatever its token. */
  #refusingIdentifies = false;
  /** While set (see `holdReady`), READY waits: the answers to each IDENTIFY, sent when let through. */
  #heldReadys: (() => void)[] | undefined;
  readonly stats: GatewayStats = { connections: 0, identifies: 0, refusedIdentifies: 0, resumes: 0, heartbeats: 0, dispatches: 0, mostOpenSessions: 0, overlaps: 0, longestOverlapMs: 0, emptied: 0 };
  /** How many sessions were connected at the last change, and since when two or more have been. */
  #lastOpen = 0;
  #overlapSince: number | undefined;
  /** When each IDENTIFY with the bot's token came (`Date.now()`), in order: Discord counts its identify rate limit on these. */
  readonly identifiedAt: number[] = [];

  constructor(options: GatewayOptions) {
    this.#options = options;
    this.#wss.on('connection', (socket) => this.#onConnection(socket));
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#wss.emit('connection', ws, req));
  }

  /** True while some session is connected and identified. */
  get connected(): boolean {
    return this.#current() !== undefined;
  }

  /**
   * Resolves once a session is connected and identified (woken by its READY or RESUMED); fails after `timeoutMs` of the
   * real clock (`realTimers`), on time even while a test holds a fake clock.
   */
  waitForReady(timeoutMs = 10_000): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = realTimers.setTimeout(() => reject(new Error(`no bot identified with the fake gateway within ${timeoutMs} ms`)), timeoutMs);
      this.#readyWaiters.push(() => {
        realTimers.clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Sends a dispatch event to every connected session, as Discord does when a bot (one shard) is connected more than once. */
  dispatch(event: string, data: unknown): void {
    const sessions = this.#open();
    if (sessions.length === 0) throw new Error(`cannot dispatch ${event}: no bot is connected to the fake gateway`);
    for (const session of sessions) {
      session.seq += 1;
      this.stats.dispatches += 1;
      session.socket!.send(JSON.stringify({ op: OP_DISPATCH, t: event, s: session.seq, d: data }));
    }
  }

  /** How many sessions are connected now. */
  get openSessions(): number {
    return this.#open().length;
  }

  /** How many WebSocket connections are open now, identified or not. */
  get openConnections(): number {
    return [...this.#wss.clients].filter((socket) => socket.readyState === socket.OPEN).length;
  }

  /**
   * Holds READY back (a Discord under load, an outage mid-login): each IDENTIFY is still taken (the bot counts as connected), and its READY
   * is sent when the answer returned is called (to a connection still open). Later identifies are answered at once again.
   */
  holdReady(): () => void {
    const held: (() => void)[] = [];
    this.#heldReadys = held;
    return () => {
      if (this.#heldReadys === held) this.#heldReadys = undefined;
      for (const send of held.splice(0)) send();
    };
  }

  /**
   * From now on every IDENTIFY (and RESUME) is closed with 4004 Authentication failed, as Discord does when the token it
   * carries is not (or no longer) valid: a token reset in the Developer Portal after the bot's REST requests were answered.
   * Sessions connected now go on (see `resetToken`).
   */
  refuseIdentifies(): void {
    this.#refusingIdentifies = true;
  }

  /**
   * The token is reset in the Developer Portal while the bot runs: every live session is closed with 4004
   * Authentication failed, and every IDENTIFY and RESUME from now on too.
   */
  resetToken(): void {
    this.#refusingIdentifies = true;
    for (const session of this.#open()) session.socket!.close(CLOSE_AUTHENTICATION_FAILED, 'Authentication failed.');
  }

  /**
   * Discord closes every live session with `code` (4014 Disallowed intents, say: a privileged intent switched off in the
   * Developer Portal while the bot runs). IDENTIFYs after it are answered as before.
   */
  closeSessions(code: number, reason: string): void {
    for (const session of this.#open()) session.socket!.close(code, reason);
  }

  /** Counts a change in the connected sessions (after an identify, a resume, a close) into `stats`. */
  #sessionsChanged(): void {
    const open = this.#open().length;
    const now = Date.now();
    this.stats.mostOpenSessions = Math.max(this.stats.mostOpenSessions, open);
    if (open >= 2 && this.#overlapSince === undefined) {
      this.#overlapSince = now;
      this.stats.overlaps += 1;
    }
    if (open < 2 && this.#overlapSince !== undefined) {
      this.stats.longestOverlapMs = Math.max(this.stats.longestOverlapMs, now - this.#overlapSince);
      this.#overlapSince = undefined;
    }
    if (open === 0 && this.#lastOpen > 0) this.stats.emptied += 1;
    this.#lastOpen = open;
  }

  #open(): Session[] {
    return [...this.#sessions.values()].filter((session) => session.socket && session.socket.readyState === session.socket.OPEN);
  }

  /** Drops every connection the way a network failure would (sessions stay resumable). */
  dropConnections(): void {
    for (const session of this.#sessions.values()) session.socket?.terminate();
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  #current(): Session | undefined {
    let latest: Session | undefined;
    for (const session of this.#sessions.values()) if (session.socket && session.socket.readyState === session.socket.OPEN) latest = session;
    return latest;
  }

  #onConnection(socket: WebSocket): void {
    this.stats.connections += 1;
    let session: Session | undefined;
    socket.send(JSON.stringify({ op: OP_HELLO, d: { heartbeat_interval: this.#options.heartbeatIntervalMs }, s: null, t: null }));
    socket.on('message', (raw) => {
      let payload: { op?: number; d?: Record<string, unknown> | number | null };
      try {
        payload = JSON.parse(String(raw)) as typeof payload;
      } catch {
        socket.close(4002, 'Error while decoding payload.');
        return;
      }
      const d = (payload.d ?? {}) as Record<string, unknown>;
      switch (payload.op) {
        case OP_HEARTBEAT:
          this.stats.heartbeats += 1;
          socket.send(JSON.stringify({ op: OP_HEARTBEAT_ACK, d: null, s: null, t: null }));
          return;
        case OP_IDENTIFY: {
          if (this.#refusingIdentifies || d.token !== this.#options.botToken) {
            this.stats.refusedIdentifies += 1;
            socket.close(CLOSE_AUTHENTICATION_FAILED, 'Authentication failed.');
            return;
          }
          this.stats.identifies += 1;
          this.identifiedAt.push(Date.now());
          session = { id: randomBytes(16).toString('hex'), seq: 1, socket };
          this.#sessions.set(session.id, session);
          this.#sessionsChanged();
          const ready = { ...this.#options.readyData(), session_id: session.id, resume_gateway_url: this.#options.resumeUrl() };
          const sendReady = () => {
            if (socket.readyState !== socket.OPEN) return;
            socket.send(JSON.stringify({ op: OP_DISPATCH, t: 'READY', s: 1, d: ready }));
            for (const wake of this.#readyWaiters.splice(0)) wake();
          };
          if (this.#heldReadys) this.#heldReadys.push(sendReady);
          else sendReady();
          return;
        }
        case OP_RESUME: {
          if (this.#refusingIdentifies) {
            this.stats.refusedIdentifies += 1;
            socket.close(CLOSE_AUTHENTICATION_FAILED, 'Authentication failed.');
            return;
          }
          const known = this.#sessions.get(String(d.session_id));
          if (!known || d.token !== this.#options.botToken) {
            socket.send(JSON.stringify({ op: OP_INVALID_SESSION, d: false, s: null, t: null }));
            return;
          }
          this.stats.resumes += 1;
          session = known;
          known.socket = socket;
          this.#sessionsChanged();
          known.seq += 1;
          socket.send(JSON.stringify({ op: OP_DISPATCH, t: 'RESUMED', s: known.seq, d: {} }));
          for (const wake of this.#readyWaiters.splice(0)) wake();
          return;
        }
        default:
          return; // presence updates, voice state, request guild members: ignored
      }
    });
    socket.on('close', () => {
      if (session && session.socket === socket) session.socket = undefined;
      this.#sessionsChanged();
    });
  }
}
