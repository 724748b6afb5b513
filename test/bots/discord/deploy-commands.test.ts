import { describe, expect, it } from 'vitest';
import { main } from '../../../bots/discord/deploy-commands.js';

async function deploy(env: NodeJS.ProcessEnv) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(env, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe('npm run discord:deploy', () => {
  it('says in one line that a malformed token is wrong, exit 2, without a stack trace', async () => {
    const { code, err } = await deploy({ DISCORD_TOKEN: 'abc' });
    expect(code).toBe(2);
    expect(err).toHaveLength(1);
    expect(err[0]).toContain('DISCORD_TOKEN');
    expect(err[0]).not.toContain('\n');
  });

  it('says in one line, without the token, when the token cannot even be sent', async () => {
    const token = 'MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.abc\ndef.ghijklmnopqrst';
    const { code, err } = await deploy({ DISCORD_TOKEN: token, DISCORD_API_BASE_URL: 'http://127.0.0.1:9' });
    expect(code).toBe(1);
    expect(err).toHaveLength(1);
    expect(err[0]).not.toContain('\n');
    expect(err[0]).not.toContain('ghijklmnop');
  });
});
