import { describe, expect, it } from 'vitest';
import { listed, type Surface, type SurfaceContext } from '../../bots/surface.js';

/** A surface of the smallest kind: configured by ECHO_TOKEN. */
const echo: Surface<{ token: string }> = {
  id: 'echo',
  hint: () => 'Echo: ECHO_TOKEN',
  readConfig: (env) => (env.ECHO_TOKEN ? { token: env.ECHO_TOKEN } : undefined),
  secrets: (config) => [config.token],
  async start(config, ctx) {
    ctx.print(`echo online with ${config.token.length} characters of token`);
    return { health: () => true, stop: async () => ctx.print('echo stopped') };
  },
};

describe('a surface as npm start lists it', () => {
  it('is left out when its settings are not there', () => {
    expect(listed(echo).configure({})).toBeUndefined();
  });

  it('hands over its secrets and starts with its own settings and the shared context', async () => {
    const configured = listed(echo).configure({ ECHO_TOKEN: 'sekrit' })!;
    expect(configured).toMatchObject({ id: 'echo', secrets: ['sekrit'] });
    const lines: string[] = [];
    const running = await configured.start({ print: (line: string) => lines.push(line) } as unknown as SurfaceContext);
    expect(running.health()).toBe(true);
    await running.stop();
    expect(lines).toEqual(['echo online with 6 characters of token', 'echo stopped']);
  });
});
