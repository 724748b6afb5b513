import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { FakeDiscord, buttonsOf, type FakeDiscordOptions, type FakeInteraction, type RouteName } from '../../test/fakes/discord/FakeDiscord.js';
import { REPO_ROOT } from './child-server.js';

/** What the Discord bench needs of the fake Discord, wherever it runs. */
export interface BenchDiscord {
  applicationId: string;
  botToken: string;
  apiBaseUrl: string;
  cdnHost: string;
  /** `/imagine` once per options, all sent at once (through the gateway); each interaction's token and creation time. */
  burst(commands: Record<string, string | number>[]): Promise<{ token: string; createdAt: number }[]>;
  /**
   * Resolves once every interaction of the burst ended: its final image, a refusal, or answered too late. The fake
   * tells it (looking again after each request it answers); nothing asks it again and again.
   */
  ended(): Promise<void>;
  /** How the burst stands now (dearer than `ended`: for a progress line now and then). */
  progress(): Promise<BurstStatus>;
  /** Everything the fake saw of the burst, once it is over. */
  report(): Promise<BurstReport>;
  close(): Promise<void>;
}

export interface BurstStatus {
  acknowledged: number;
  tooLate: number;
  finals: number;
  refused: number;
}

/** A request as the bench reads it (the fake's record without bodies). */
export interface BenchRequest {
  at: number;
  method: string;
  route: RouteName;
  status: number;
  code: number | undefined;
  token: string | undefined;
  files: { filename: string; size: number }[];
  multipart: boolean;
}

export interface BurstReport {
  /** By token. */
  interactions: Record<string, { acknowledged: boolean; final: boolean; refused: boolean; tooLate: boolean }>;
  requests: BenchRequest[];
  heldFileBytes: number;
  rejectedByLimit: number;
  /** The fake's CPU from the burst to the report, when it runs in a process of its own. */
  fakeCpuMs: number | undefined;
}

export interface BenchDiscordOptions extends Pick<FakeDiscordOptions, 'messageRateLimit' | 'ackDeadlineMs' | 'heartbeatIntervalMs'> {
  /** Images per job: a job is final once its reply carries the last one with Reroll. */
  images: number;
}

/** The bench's questions, answered by a fake Discord in this process (in the child, or here with `PICTOR_BENCH_FAKE_IN_PROCESS=1`). */
function burstBook(discord: FakeDiscord, images: number) {
  const burst: FakeInteraction[] = [];
  const finalFile = new RegExp(`^pictor-.+-${images}\\.png$`);
  const isFinal = (ix: FakeInteraction) => {
    const message = discord.original(ix);
    return !!message && message.attachments.some((a) => finalFile.test(a.filename)) && buttonsOf(message).some((b) => b.label === 'Reroll');
  };
  /** A job refused at once because the queue was full: its reply says so. */
  const isRefused = (ix: FakeInteraction) => /The bot is busy/.test(discord.original(ix)?.content ?? '');
  /** Answered after the deadline (the fake refused it with 10062): nothing can be shown. */
  const isTooLate = (ix: FakeInteraction) => !ix.ack && ix.callbackAttempts > 0;
  // Interactions seen to end are not looked at again (looked at after every request the fake answers).
  let ended = 0;
  const allEnded = () => {
    while (ended < burst.length && (isFinal(burst[ended]!) || isRefused(burst[ended]!) || isTooLate(burst[ended]!))) ended++;
    return ended === burst.length;
  };
  /** Those told when every interaction of the burst has ended. */
  const waiting: (() => void)[] = [];
  let cpuAtBurst: NodeJS.CpuUsage | undefined;
  return {
    /** A request was answered: what it changed may have ended the burst. */
    answered(): void {
      if (waiting.length === 0 || !allEnded()) return;
      for (const tell of waiting.splice(0)) tell();
    },
    burst(commands: Record<string, string | number>[]) {
      cpuAtBurst = process.cpuUsage();
      const sent = commands.map((options) => discord.slashCommand('imagine', options));
      burst.push(...sent);
      return sent.map((ix) => ({ token: ix.token, createdAt: ix.createdAt }));
    },
    ended(): Promise<void> {
      if (allEnded()) return Promise.resolve();
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    progress(): BurstStatus {
      return {
        acknowledged: burst.filter((ix) => ix.ack).length,
        tooLate: burst.filter(isTooLate).length,
        finals: burst.filter(isFinal).length,
        refused: burst.filter(isRefused).length,
      };
    },
    report(apart: boolean): BurstReport {
      const cpu = process.cpuUsage(cpuAtBurst);
      return {
        fakeCpuMs: apart ? (cpu.user + cpu.system) / 1000 : undefined,
        interactions: Object.fromEntries(burst.map((ix) => [ix.token, { acknowledged: !!ix.ack, final: isFinal(ix), refused: isRefused(ix), tooLate: isTooLate(ix) }])),
        requests: discord.requests.map((r) => ({ at: r.at, method: r.method, route: r.route, status: r.status, code: r.code, token: r.token, files: r.files.map((f) => ({ filename: f.filename, size: f.size })), multipart: r.multipart })),
        heldFileBytes: discord.heldFileBytes,
        rejectedByLimit: discord.rejectedByLimit,
      };
    },
  };
}

/**
 * The fake as the bench starts it, with its book of the burst: it keeps only the sizes of what the bot uploads, so
 * the bot's memory is measured.
 */
async function startFake(options: BenchDiscordOptions): Promise<{ discord: FakeDiscord; book: ReturnType<typeof burstBook> }> {
  const started: { book?: ReturnType<typeof burstBook> } = {};
  const discord = await FakeDiscord.start({
    messageRateLimit: options.messageRateLimit,
    ackDeadlineMs: options.ackDeadlineMs,
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    keepUploadedBytes: false,
    onRequest: () => started.book?.answered(),
  });
  const book = burstBook(discord, options.images);
  started.book = book;
  return { discord, book };
}

/** The fake Discord in this process: its work (the gateway's dispatches, reading every request) shares the bot's event loop and CPU. */
export async function fakeDiscordHere(options: BenchDiscordOptions): Promise<BenchDiscord> {
  const { discord, book } = await startFake(options);
  return {
    applicationId: discord.applicationId,
    botToken: discord.botToken,
    apiBaseUrl: discord.apiBaseUrl,
    cdnHost: discord.cdnHost,
    burst: async (commands) => book.burst(commands),
    ended: () => book.ended(),
    progress: async () => book.progress(),
    report: async () => book.report(false),
    close: () => discord.close(),
  };
}

type Question = { op: 'burst'; commands: Record<string, string | number>[] } | { op: 'ended' | 'progress' | 'report' };
type Ask = Question & { id: number };

/**
 * The fake Discord in a process of its own, asked over IPC: what the bench measures in its own process (CPU, event-loop
 * delay, the first answers' wait) is then the bot's, as it would be against Discord, where the other side's work is
 * not on the bot's machine. The two processes still share the machine's cores.
 */
export async function fakeDiscordApart(options: BenchDiscordOptions): Promise<BenchDiscord> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', JSON.stringify(options)], { cwd: REPO_ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // A fake that dies (before it is ready, or while the bench asks it) ends the bench with an error, never a hang.
  const exited = new Promise<never>((_, reject) => child.once('exit', (code, signal) => reject(new Error(`the fake Discord's process ended (${signal ?? `exit code ${code}`})`))));
  exited.catch(() => {});
  const [ready] = (await Promise.race([once(child, 'message'), exited])) as [Pick<BenchDiscord, 'applicationId' | 'botToken' | 'apiBaseUrl' | 'cdnHost'>];
  const waiting = new Map<number, (value: unknown) => void>();
  child.on('message', (message: { id: number; value: unknown }) => {
    waiting.get(message.id)?.(message.value);
    waiting.delete(message.id);
  });
  let next = 0;
  const ask = <T>(question: Question): Promise<T> =>
    Promise.race([
      new Promise<T>((resolve) => {
        const id = next++;
        waiting.set(id, resolve as (value: unknown) => void);
        child.send({ ...question, id });
      }),
      exited,
    ]);
  return {
    ...ready,
    burst: (commands) => ask({ op: 'burst', commands }),
    ended: () => ask({ op: 'ended' }),
    progress: () => ask({ op: 'progress' }),
    report: () => ask({ op: 'report' }),
    async close() {
      const gone = once(child, 'exit');
      child.disconnect();
      await gone;
    },
  };
}

/** Child side: the fake, answering the bench until it disconnects. */
async function serve(options: BenchDiscordOptions): Promise<void> {
  const { discord, book } = await startFake(options);
  process.on('message', (ask: Ask) => {
    // `ended` is answered when it holds, which may be long after it was asked.
    if (ask.op === 'ended') return void book.ended().then(() => process.send!({ id: ask.id, value: undefined }));
    const value = ask.op === 'burst' ? book.burst(ask.commands) : ask.op === 'progress' ? book.progress() : book.report(true);
    process.send!({ id: ask.id, value });
  });
  process.once('disconnect', () => void discord.close().finally(() => process.exit(0)));
  process.send!({ applicationId: discord.applicationId, botToken: discord.botToken, apiBaseUrl: discord.apiBaseUrl, cdnHost: discord.cdnHost });
}

if (process.argv[2] === '--serve') await serve(JSON.parse(process.argv[3]!) as BenchDiscordOptions);
