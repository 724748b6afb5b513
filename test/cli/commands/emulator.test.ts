import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runEmulator } from '../../../src/cli/commands/emulator.js';
import type { CliContext } from '../../../src/cli/context.js';
import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { testTempDir } from '../../helpers/temp-dir.js';
import { runTryLine } from '../../helpers/try-line.js';
import { run } from '../run-cli.js';

function context(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  let printedLine = () => {};
  /** Resolves once `ready` holds, checked as each line is printed: a wait on the output, not on the clock. */
  const printed = (ready: () => boolean) =>
    new Promise<void>((resolve) => {
      printedLine = () => void (ready() && resolve());
      printedLine();
    });
  const ctx: CliContext = {
    stdout: (l) => (out.push(l), printedLine()),
    stderr: (l) => (err.push(l), printedLine()),
    env,
    connect: () => Promise.reject(new Error('unused')),
    client: (c) => c.client,
  };
  return { ctx, out, err, printed };
}

/** Starts `pictor emulator` with these flags; resolves once its banner is printed. */
async function started(args: string[], env: NodeJS.ProcessEnv = {}) {
  const { ctx, out, err, printed } = context(env);
  const stop = new AbortController();
  const running = runEmulator(args, ctx, stop.signal);
  await Promise.race([printed(() => out.length >= 4 || err.length > 0), running]);
  return { out, err, stop: async () => {
    stop.abort();
    return running;
  } };
}

describe('pictor emulator', () => {
  it('prints a Try line that runs as printed in this repository, with the key it printed', async () => {
    // `npm run pictor -- emulator` in Pictor's own repository.
    const ownScript = { npm_package_name: 'pictor', npm_package_json: `${process.cwd()}/package.json` };
    const emulator = await started(['--port', '0', '--latency-ms', '0'], ownScript);
    const tryLine = emulator.out.find((l) => l.startsWith('Try:'))!;
    expect(tryLine).toContain(' npm run pictor -- generate ');
    expect(tryLine).not.toContain('<');
    expect(tryLine).toContain(`PICTOR_API_KEY=${DEV_API_KEY}`);
    const result = await runTryLine(tryLine);
    expect(result.code).toBe(0);
    expect(result.files.some((f) => f.endsWith('.png'))).toBe(true);
    await expect(emulator.stop()).resolves.toBe(0);
  });

  it('prints a Try line with npx pictor where Pictor is an installed package (npx pictor emulator, or another project’s script), which runs as printed', async () => {
    for (const env of [{}, { npm_package_name: 'thumbnails', npm_package_json: `${process.cwd()}/package.json` }]) {
      const emulator = await started(['--port', '0', '--latency-ms', '0'], env);
      const tryLine = emulator.out.find((l) => l.startsWith('Try:'))!;
      expect(tryLine).toMatch(/^Try: PICTOR_BASE_URL=\S+ PICTOR_API_KEY=\S+ npx pictor generate --prompt /);
      expect(tryLine).not.toContain('npm run');
      expect((await runTryLine(tryLine)).code).toBe(0);
      await emulator.stop();
    }
  });

  it('does not print a key it was given, and its Try line still runs with the key set by the user', async () => {
    const emulator = await started(['--port', '0', '--latency-ms', '0'], { PICTOR_API_KEY: 'sk-users-own-key' });
    const text = emulator.out.join('\n');
    expect(text).not.toContain('sk-users-own-key');
    const tryLine = emulator.out.find((l) => l.startsWith('Try:'))!;
    expect(tryLine).not.toContain('PICTOR_API_KEY=');
    // The user's shell (or .env) has the key; the line adds the rest.
    const result = await runTryLine(tryLine.replace('Try: ', 'Try: PICTOR_API_KEY=sk-users-own-key '));
    expect(result.code).toBe(0);
    await emulator.stop();
  });

  it('says it is the emulator and how fast it answers: service-like by default, instant with --latency-ms 0', async () => {
    const slow = await started(['--port', '0']);
    expect(slow.out.join('\n')).toMatch(/takes about 6 s per medium 1024x1024 image/);
    await slow.stop();
    const fromEnv = await started(['--port', '0'], { PICTOR_EMULATOR_LATENCY_MS: '2000' });
    expect(fromEnv.out.join('\n')).toMatch(/takes about 2 s per medium 1024x1024 image/);
    await fromEnv.stop();
    const instant = await started(['--port', '0', '--latency-ms', '0']);
    expect(instant.out.join('\n')).toMatch(/Image service emulator listening on http:\/\/127\.0\.0\.1:\d+ .*no money/);
    expect(instant.out.join('\n')).toMatch(/answers instantly/);
    await instant.stop();
  });

  it('injects the faults given with --fault, in order, each for its count, then answers normally', async () => {
    const emulator = await started(['--port', '0', '--latency-ms', '0', '--fault', 'rate_limited:2', '--fault', 'server_error']);
    const url = /listening on (http:\/\/\S+)/.exec(emulator.out.join('\n'))![1]!;
    const service = { PICTOR_BASE_URL: url, PICTOR_API_KEY: DEV_API_KEY, PICTOR_MAX_RETRIES: '0' };
    const dir = await testTempDir('pictor-faults-');
    const codes: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      const { stdout } = await run(['generate', '--prompt', 'x', '--json', '--out', `${dir}/`], service);
      const result = JSON.parse(stdout) as { ok: boolean; code?: string };
      codes.push(result.ok ? 'ok' : result.code);
    }
    expect(codes).toEqual(['rate_limited', 'rate_limited', 'server_error', 'ok']);
    await emulator.stop();
  });

  it('answers every image request as an account out of credit with --out-of-credit', async () => {
    const emulator = await started(['--port', '0', '--latency-ms', '0', '--out-of-credit']);
    const url = /listening on (http:\/\/\S+)/.exec(emulator.out.join('\n'))![1]!;
    const { code, stdout } = await run(['generate', '--prompt', 'x', '--json'], { PICTOR_BASE_URL: url, PICTOR_API_KEY: DEV_API_KEY });
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, code: 'quota_exhausted' });
    await emulator.stop();
  });

  it.each(['no_such_fault', 'server_error:0', 'server_error:2:3'])('refuses --fault %s, listing the faults', async (value) => {
    const { ctx, err } = context();
    expect(await runEmulator(['--fault', value], ctx)).toBe(2);
    expect(err.join('\n')).toContain('--fault must be one of server_error, service_unavailable');
  });

  it('says a busy port is in use and suggests --port 0', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const { ctx, err } = context();
    const code = await runEmulator(['--port', String(port), '--latency-ms', '0'], ctx);
    blocker.close();
    expect(code).toBe(1);
    expect(err.join('\n')).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(err.join('\n')).toContain('--port 0');
  });

  it.each([['--port', 'abc'], ['--port', '70000'], ['--latency-ms', '-5'], ['--images-per-minute', 'lots']])(
    'refuses %s %s as a validation error naming the flag, without talk of sending',
    async (flag, value) => {
      const { ctx, err } = context();
      const code = await runEmulator([flag, value], ctx);
      expect(code).toBe(2);
      expect(err.join('\n')).toContain(flag);
      expect(err.join('\n')).not.toContain('Nothing was sent');
    },
  );

  it('refuses an unknown flag naming it, without talk of sending', async () => {
    const { ctx, err } = context();
    expect(await runEmulator(['--prot', '1'], ctx)).toBe(2);
    expect(err.join('\n')).toContain('--prot');
    expect(err.join('\n')).not.toContain('Nothing was sent');
  });
});
