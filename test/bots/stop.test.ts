import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { FakeDiscord } from '../fakes/discord/FakeDiscord.js';
import { useEmulator } from '../helpers/emulator.js';
import { surfaceEnv, useCleanup } from '../helpers/service-fakes.js';
import { builtFile } from '../helpers/built.js';
import { killedAtTestEnd } from '../helpers/killed-at-test-end.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { waitUntil } from '../helpers/runner-harness.js';
import { untilPrinted } from '../helpers/until-printed.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const emu = useEmulator();
const defer = useCleanup();

/** How a process ended: its exit code, or the signal that ended it (code null). */
type Exit = { code: number | null; signal: NodeJS.Signals | null };

type Started = {
  child: ChildProcessByStdio<null, Readable, Readable>;
  printed: () => string;
  stderr: () => string;
  /** Its exit code once it has exited (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Its code and signal once it has closed: everything it wrote to stderr has been read by then. */
  closed: Promise<Exit>;
};

/**
 * What `npm start` runs (the built service), started as a process manager starts it: signals go to the service
 * itself (npm would hand them to the `sh -c` it runs the script in, not to the service). Killed when the test ends and
 * waited for until it has closed (`killedAtTestEnd`), so its data folder (`testTempDir`) is removed after it.
 */
function npmStart(env: Record<string, string>, nodeOptions: string[] = []): Started {
  const child = spawn(process.execPath, [...nodeOptions, builtService], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PICTOR_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killedAtTestEnd(child, 'npm start');
  let printed = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const closed = new Promise<Exit>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { child, printed: () => printed, stderr: () => stderr, exited, closed };
}

/** How a process ended, and what it wrote to stderr: the message of a failed check of its exit code. */
function howItEnded(started: Started, ended: Exit | 'still running'): string {
  const how = ended === 'still running' ? 'was still running' : ended.signal ? `was ended by ${ended.signal}` : `exited with code ${String(ended.code)}`;
  return `the process ${how}; its stderr:
${started.stderr() || '(nothing)'}
`;
}

/** The reader of stdout goes away (`| head -1` done, a log shipper gone): the pipe's read end is closed. */
function closeStdout(started: Started): void {
  started.child.stdout.destroy();
}

/**
 * Asks for jobs until one is told the bot is restarting: the sign that the process has taken a stop signal (its
 * stdout, where it says so, may be closed). One asked before that is taken as a job.
 */
async function untilToldRestarting(discord: FakeDiscord): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const ix = discord.slashCommand('imagine', { prompt: `asked while it stops ${i}`, quality: 'low' });
    const answer = await discord.waitFor(() => discord.original(ix)?.content || undefined, 'the first answer to a new job');
    if (/restarting/.test(answer)) return;
  }
  throw new Error('no job was refused: the process did not take the stop signal');
}

const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'still running'> =>
  Promise.race([promise, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), ms).unref())]);

/** The built service; set before the tests, which fail at once saying "build first" on a tree not built (or built before its sources changed). */
let builtService: string;

describe('stopping npm start', () => {
  beforeAll(() => {
    builtService = builtFile('dist/bots/main.js');
  });

  it('ends quietly when its stdout reader is gone (npm start | head -1), without an EPIPE stack', async () => {
    const dataDir = await testTempDir('pictor-stop-');
    const started = npmStart({ PICTOR_DATA_DIR: dataDir, PICTOR_EMULATOR_LATENCY_MS: '0' });
    await untilPrinted(started.child, () => started.printed().includes('\n'), 'the first line');
    closeStdout(started);
    started.child.kill('SIGTERM'); // its answer ("SIGTERM: taking no new jobs…") goes to the closed pipe
    // Checked with how it ended and its stderr in the message: a run that ends otherwise says why. The bound only
    // turns a process that never ends into that message before the test's own timeout; a busy machine (CI shares its
    // cores) may take well over 15 s to stop the bot, which is not what this test is about.
    const ended = await within(started.closed, 50_000);
    expect(ended === 'still running' ? ended : ended.code, howItEnded(started, ended)).toBe(0);
    expect(started.stderr()).not.toMatch(/EPIPE|Error:|\n\s+at /);
  }, 60_000);

  it('has a handler for SIGTERM and SIGINT at every moment from its start: none is removed, which would leave a moment when a signal ends it unhandled', async () => {
    // Node ends the process at once on a signal with no listener left (its default action): a stop signal that came
    // between one handler's removal and the next's was taken so, as "ended by SIGTERM" with nothing said.
    const watch = `process.on('removeListener', (type) => { if ((type === 'SIGTERM' || type === 'SIGINT') && process.listenerCount(type) === 0) process.stderr.write('no ' + type + ' handler\\n'); });`;
    const dataDir = await testTempDir('pictor-stop-');
    const started = npmStart({ PICTOR_DATA_DIR: dataDir, PICTOR_EMULATOR_LATENCY_MS: '0' }, ['--import', `data:text/javascript,${encodeURIComponent(watch)}`]);
    await untilPrinted(started.child, () => started.printed().includes('No chat surface is configured'), 'the start has ended');
    started.child.kill('SIGTERM');
    const ended = await within(started.closed, 50_000);
    expect(ended === 'still running' ? ended : ended.code, howItEnded(started, ended)).toBe(0);
    expect(started.stderr()).not.toMatch(/no SIG\w+ handler/);
  }, 60_000);

  it('ends at once on SIGTERM while still starting (as PID 1 in a container, Node would otherwise ignore it)', async () => {
    // A Discord API that takes connections and never answers: the login waits.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    const reached = new Promise<'reached'>((resolve) => silent.once('connection', () => resolve('reached')));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    defer(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => silent.close(() => resolve()));
    });
    const dataDir = await testTempDir('pictor-stop-');
    const discord = { DISCORD_TOKEN: `${Buffer.from('104567890123456789').toString('base64')}.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB`, DISCORD_API_BASE_URL: `http://127.0.0.1:${(silent.address() as { port: number }).port}/api` };
    const started = npmStart({ PICTOR_DATA_DIR: dataDir, PICTOR_EMULATOR_LATENCY_MS: '0', ...discord });
    // The login's connection, however long a loaded machine takes to start the process; unless the process ends first.
    expect(await Promise.race([reached, started.exited.then(() => 'exited before its login reached Discord')])).toBe('reached');
    started.child.kill('SIGTERM');
    expect(await within(started.exited, 5_000)).toBe(143);
  }, 60_000);

  it('ends cleanly within its grace when Discord stops answering and stdout is gone, with a job running; a second signal stops it at once', async () => {
    const discord = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    defer(() => discord.close());
    const dataDir = await testTempDir('pictor-stop-');
    emu.emulator.configure({ latencyMs: 60_000 });
    const env = {
      PICTOR_BASE_URL: emu.url,
      PICTOR_API_KEY: DEV_API_KEY,
      PICTOR_DATA_DIR: dataDir,
      PICTOR_PARTIAL_IMAGES: '0',
      PICTOR_SHUTDOWN_GRACE_SECONDS: '1',
      ...surfaceEnv({ discord }),
    };
    const started = npmStart(env);
    await untilPrinted(started.child, () => started.printed().includes('Discord bot is online'), 'the bot is online');
    discord.slashCommand('imagine', { prompt: 'a lighthouse that never finishes', quality: 'low' });
    await waitUntil(() => emu.emulator.requests.length > 0, 'the job reached the service', 30_000);

    discord.stopAnswering();
    closeStdout(started);
    started.child.kill('SIGTERM');
    // Grace 1 s; the runner and the bot give up on the last messages Discord will never take by the stop's deadline,
    // 2 s before STOP_ALLOWANCE_MS (10 s) ends, and the stores still close: a clean exit, not a forced one.
    expect(await within(started.exited, 20_000)).toBe(0);
    expect(started.stderr()).not.toContain('could not stop cleanly');
    expect(started.stderr()).not.toMatch(/EPIPE/);

    // The same, stopped by a second signal instead of waiting out the grace.
    const answering = await FakeDiscord.start({ heartbeatIntervalMs: 1000 });
    defer(() => answering.close());
    const again = npmStart({ ...env, ...surfaceEnv({ discord: answering }), PICTOR_SHUTDOWN_GRACE_SECONDS: '300' });
    await untilPrinted(again.child, () => again.printed().includes('Discord bot is online'), 'the bot is online again');
    const sent = emu.emulator.requests.length;
    answering.slashCommand('imagine', { prompt: 'another that never finishes', quality: 'low' });
    await waitUntil(() => emu.emulator.requests.length > sent, 'the second job reached the service', 30_000);
    closeStdout(again);
    again.child.kill('SIGTERM');
    await untilToldRestarting(answering);
    again.child.kill('SIGINT');
    expect(await within(again.exited, 3_000)).toBe(1);
  }, 90_000);
});
