import { describe, expect, it } from 'vitest';
import { DEV_API_KEY } from '../../../src/emulator/index.js';
import { useEmulator } from '../../helpers/emulator.js';
import { run, tempDir } from '../run-cli.js';

const env = useEmulator();

/** Runs `pictor generate` of one low-quality image against the emulator. */
async function generate(environment: NodeJS.ProcessEnv = {}) {
  const out = await tempDir();
  return run(['generate', '--prompt', 'a lighthouse', '--quality', 'low', '--out', out], { PICTOR_BASE_URL: env.url, PICTOR_API_KEY: DEV_API_KEY, ...environment });
}

// How a duration reads is checked once (test/core/describe-duration.test.ts); here, that these lines use that rule.
describe('pictor generate says its durations as every other line does', () => {
  it('says a retry wait under a second in milliseconds, rounded up as every wait is', async () => {
    env.emulator.injectFault('rate_limited', { retryAfterMs: 300 });

    const { code, stderr } = await generate({ PICTOR_MAX_RETRIES: '1' });

    expect(code).toBe(0);
    expect(stderr.split('\n')).toContain('retry 1 in 300 ms (rate_limited)');
  });

  it('says how long the job took as a time taken: milliseconds under a second, never "0.3 s"', async () => {
    const { code, stdout } = await generate();

    expect(code).toBe(0);
    const took = /^Wrote 1 image \(1024x1024, low, png\) in (.+):$/m.exec(stdout)?.[1];
    expect(took).toMatch(/^(\d+ ms|[1-9]\d*\.\d s|\d+ min \d+ s)$/);
  });
});
