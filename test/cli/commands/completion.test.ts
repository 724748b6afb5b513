import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { completionScript } from '../../../src/cli/commands/completion.js';
import { COMMANDS, IMAGE_FLAGS } from '../../../src/cli/flags.js';
import { run } from '../run-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Sources the bash script in a real bash and completes the words given, as bash would on Tab. */
async function completeInBash(words: string[]): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'pictor-completion-'));
  dirs.push(dir);
  const script = join(dir, 'pictor.bash');
  await writeFile(script, completionScript('bash'));
  const program = `source ${JSON.stringify(script)}; COMP_WORDS=(${words.map((w) => JSON.stringify(w)).join(' ')}); COMP_CWORD=${words.length - 1}; _pictor; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return new Promise((resolve, reject) => {
    execFile('bash', ['--noprofile', '--norc', '-c', program], (error, stdout, stderr) => (error ? reject(new Error(stderr || error.message)) : resolve(stdout.split('\n').filter(Boolean))));
  });
}

const bashHere = await new Promise<boolean>((resolve) => execFile('bash', ['-c', 'complete -p >/dev/null 2>&1; exit 0'], (error) => resolve(!error)));

describe('pictor completion', () => {
  it.skipIf(!bashHere)('completes commands in bash', async () => {
    expect(await completeInBash(['pictor', 'gen'])).toEqual(['generate']);
    expect(await completeInBash(['pictor', ''])).toEqual(expect.arrayContaining(Object.keys(COMMANDS)));
  });

  it.skipIf(!bashHere)('completes each command’s flags in bash, from the flags the parser takes', async () => {
    expect(await completeInBash(['pictor', 'generate', '--qu'])).toEqual(['--quality']);
    expect((await completeInBash(['pictor', 'generate', '--'])).sort()).toEqual(Object.keys(IMAGE_FLAGS).map((f) => `--${f}`).sort());
    expect(await completeInBash(['pictor', 'edit', '--ima'])).toEqual(['--image']);
    expect(await completeInBash(['pictor', 'emulator', '--fa'])).toEqual(['--fault']);
    expect(await completeInBash(['pictor', 'completion', 'f'])).toEqual(['fish']);
  });

  it.skipIf(!bashHere)('prints a bash script that bash accepts', async () => {
    const { code, stdout } = await run(['completion', 'bash']);
    expect(code).toBe(0);
    await expect(
      new Promise((resolve, reject) => execFile('bash', ['--noprofile', '--norc', '-n', '-c', stdout], (error) => (error ? reject(error) : resolve(true)))),
    ).resolves.toBe(true);
  });

  it('names every command and flag in the zsh and fish scripts', async () => {
    for (const shell of ['zsh', 'fish'] as const) {
      const { code, stdout } = await run(['completion', shell]);
      expect(code).toBe(0);
      for (const [name, c] of Object.entries(COMMANDS)) {
        expect(stdout).toContain(name);
        for (const flag of Object.keys(c.flags)) expect(stdout).toMatch(shell === 'fish' ? `-l ${flag}` : `--${flag}`);
      }
    }
  });

  it('refuses a shell it does not know, naming the ones it does (exit 2)', async () => {
    const { code, stderr } = await run(['completion', 'powershell']);
    expect(code).toBe(2);
    expect(stderr).toContain('pictor completion takes one shell: bash, zsh, fish, not "powershell"');
    expect(stderr).not.toContain('Nothing was sent');
  });
});
