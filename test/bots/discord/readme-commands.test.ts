import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { commandDefinitions } from '../../../bots/discord/commands/index.js';

describe("bots/discord/README's list of commands", () => {
  it('names every command npm run discord:deploy registers, and no other', async () => {
    const readme = await readFile(new URL('../../../bots/discord/README.md', import.meta.url), 'utf8');
    const sentence = /It replaces the application's commands with these (\d+): ([^\n]+)/.exec(readme);
    expect(sentence, 'the sentence that lists what deploy registers').not.toBeNull();
    const listed = [...sentence![2]!.matchAll(/`\/([\w-]+)`|“([^”]+)”/g)].map((m) => m[1] ?? m[2]);
    const registered = commandDefinitions(undefined, {}).map((c) => c.name);
    expect(listed.sort()).toEqual([...registered].sort());
    expect(Number(sentence![1])).toBe(registered.length);
  });
});
