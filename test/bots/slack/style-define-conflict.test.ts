import { afterEach, describe, expect, it } from 'vitest';
import { slackKeyOf } from '../../helpers/message-keys.js';
import { privately, startHarness, type Harness } from './harness.js';

const ADMIN = 'U0ADMIN';
const scope = (harness: Harness) => ({ platform: 'slack' as const, scopeId: harness.fake.teamId });

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('a house style whose own options do not go together, defined on Slack', () => {
  it('is refused privately, naming both flags, and nothing is saved', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    const answer = await privately(h.fake, 'admin style cutout {prompt}, cut out --background transparent --format jpeg', ADMIN);
    expect(answer).toMatch(/^:raised_hand: /u);
    expect(slackKeyOf(answer)).toBe('styles.option_conflict');
    expect(answer).toContain('--background');
    expect(answer).toContain('--format');
    expect(await h.runner.styles.list(scope(h))).toEqual([]);
    expect(h.emulator.requests).toHaveLength(0);
  });

  it('keeps the style it would have replaced as it was', async () => {
    h = await startHarness({ bot: { adminUserIds: [ADMIN] } });
    expect(await privately(h.fake, 'admin style cutout {prompt}, cut out --background transparent', ADMIN)).toMatch(/^:white_check_mark:/u);
    expect(slackKeyOf(await privately(h.fake, 'admin style cutout {prompt}, cut out --background transparent --format jpeg', ADMIN))).toBe('styles.option_conflict');
    const [kept] = await h.runner.styles.list(scope(h));
    expect(kept?.options).toEqual({ background: 'transparent' });
  });
});
