import { homedir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { readCoreConfig } from '../../src/config.js';
import { EDIT_USAGE, GENERATE_USAGE } from '../../src/cli/commands/image-job.js';
import { DEV_API_KEY } from '../../src/emulator/index.js';
import { useEmulator } from '../helpers/emulator.js';
import { run } from './run-cli.js';

const env = useEmulator();
const service = () => ({ PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY });

describe('pictor flags', () => {
  it('refuses a flag given twice, naming both values, and sends nothing', async () => {
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--quality', 'low', '--quality', 'high'], service());
    expect(code).toBe(2);
    expect(stderr).toContain('--quality was given 2 times (low, then high)');
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('refuses a boolean flag given twice too, but lets --image repeat', async () => {
    expect((await run(['generate', '--prompt', 'x', '--stream', '--stream'], service())).code).toBe(2);
    expect((await run(['edit', '--prompt', 'x', '--image', '/nonexistent/a.png', '--image', '/nonexistent/b.png'], service())).stderr).not.toContain('given 2 times');
  });

  it('points an unknown flag to --help', async () => {
    const { code, stderr } = await run(['generate', '--promt', 'x']);
    expect(code).toBe(2);
    expect(stderr).toContain('Run "pictor generate --help"');
  });

  it.each([
    [['generate', '--promt', 'x'], 'Did you mean --prompt?'],
    [['generate', '--prompt', 'x', '--qualty', 'low'], 'Did you mean --quality?'],
    [['generate', '--prompt', 'x', '--output', 'a.png'], 'Did you mean --out?'],
    [['price', '--siz', '1024x1024'], 'Did you mean --size?'],
  ])('suggests the flag meant: %s', async (argv, suggestion) => {
    const { code, stderr } = await run(argv);
    expect(code).toBe(2);
    expect(stderr).toContain(suggestion);
  });

  it('suggests nothing when no flag is close', async () => {
    const { stderr } = await run(['generate', '--prompt', 'x', '--colour', 'red']);
    expect(stderr).toContain("Unknown option '--colour'");
    expect(stderr).not.toContain('Did you mean');
  });

  it.each([
    ['gen', 'generate'],
    ['genrate', 'generate'],
    ['prize', 'price'],
    ['emu', 'emulator'],
  ])('suggests the command meant by %s', async (typed, meant) => {
    const { code, stderr } = await run([typed]);
    expect(code).toBe(2);
    expect(stderr).toBe(`pictor: unknown command "${typed}". Did you mean "${meant}"? Run "pictor --help" for the commands.`);
  });

  it('refuses --partial-images without --stream', async () => {
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--partial-images', '2'], service());
    expect(code).toBe(2);
    expect(stderr).toContain('--partial-images needs --stream');
    expect(env.emulator.requests).toHaveLength(0);
  });

  it('lists the allowed values once', async () => {
    const { stderr } = await run(['generate', '--prompt', 'x', '--size', '512x512']);
    expect(stderr.split('1024x1024, 1024x1536, 1536x1024')).toHaveLength(2);
  });

  it('never offers the rejected value as allowed (transparent with jpeg)', async () => {
    const { code, stderr } = await run(['generate', '--prompt', 'x', '--background', 'transparent', '--format', 'jpeg']);
    expect(code).toBe(2);
    expect(stderr).toContain('png or webp');
    expect(stderr).not.toContain('Allowed: png, jpeg, webp');
  });
});

describe('pictor help and version', () => {
  it('shows every option with its default, --partial-images under --stream, and PICTOR_TIMEOUT_SECONDS', async () => {
    for (const usage of [GENERATE_USAGE, EDIT_USAGE]) {
      for (const line of usage.split('\n').filter((l) => /^\s+--(?!prompt|image)/.test(l))) expect(line).toMatch(/default/);
      expect(usage).toMatch(/--stream .*\n\s+--partial-images K\s+with --stream/);
      expect(usage).toContain('PICTOR_TIMEOUT_SECONDS');
      // Every exit code the command ends with, 130 (Ctrl+C) and 143 (SIGTERM) too.
      expect(usage).toMatch(/Exit codes: 0 done; 2 [^;]+; 1 [^;]+; 130 stopped by Ctrl\+C[^;]+; 143 stopped by SIGTERM/);
      // Exit 1 is "may be billed" or a refusal that sent nothing: what tells them apart is said.
      expect(usage.replace(/\s+/g, ' ')).toContain(
        '1 the service or network failed (the message says whether it may have been billed), or the images could not be written where asked (they are then saved in the OS temp directory and the path is printed), or a cap or a busy ledger refused the job before anything was sent (nothing billed: stderr then ends "Nothing was sent." and the --json code is budget_… or ledger_busy)',
      );
    }
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('PICTOR_TIMEOUT_SECONDS');
  });

  it('tells the truth about where the file ledger is without PICTOR_DATA_DIR: the folder the CLI uses', async () => {
    const { stdout } = await run(['--help']);
    const said = /PICTOR_DATA_DIR .*\(default ([^\s,)]+)[,)]/.exec(stdout)?.[1];
    expect(said?.replace('~', homedir())).toBe(readCoreConfig({ HOME: homedir() }).spend.dataDir);
  });

  it('prints its version', async () => {
    const { code, stdout } = await run(['--version']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});
