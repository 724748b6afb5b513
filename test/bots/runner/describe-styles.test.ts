import { describe, expect, it } from 'vitest';
import { changeStyle, HouseStyles } from '../../../bots/runner/index.js';
import { requester } from '../../helpers/runner-harness.js';

/** The sentences an admin reads when defining, replacing and removing a house style (each checked once, here). */
describe('what an admin is told about a house style they change', () => {
  const admin = requester({ userId: 'admin-1', isAdmin: true });

  it('says a style was defined, with its text and options, and how members pick it', async () => {
    const styles = new HouseStyles();
    expect(await changeStyle(styles, admin, 'neon', 'neon {prompt}', { size: '1024x1536' }, '`style:`')).toEqual({
      ok: true,
      message: 'House style neon defined: “neon {prompt}” (size 1024x1536). Members pick it with `style:`.',
    });
  });

  it('says a style was replaced, with its new text', async () => {
    const styles = new HouseStyles();
    await changeStyle(styles, admin, 'neon', 'neon {prompt}', {}, '`style:`');
    expect((await changeStyle(styles, admin, 'neon', 'neon-lit {prompt}', {}, '`style:`')).message).toBe(
      'House style neon replaced: “neon-lit {prompt}”. Members pick it with `style:`.',
    );
  });

  it('says a style was removed and that a job naming it is refused', async () => {
    const styles = new HouseStyles();
    await changeStyle(styles, admin, 'neon', 'neon {prompt}', {}, '`style:`');
    expect(await changeStyle(styles, admin, 'neon', 'clear', {}, '`style:`')).toEqual({ ok: true, message: 'House style neon removed; a job that names it is refused.' });
  });

  it('says a style whose own options do not go together was not saved, naming both options as the surface calls them', async () => {
    const styles = new HouseStyles();
    expect(await changeStyle(styles, admin, 'cutout', '{prompt}, cut out', { background: 'transparent', output_format: 'jpeg' }, '`style:`', { output_format: 'format' })).toEqual({
      ok: false,
      code: 'option_conflict',
      message: 'House style cutout not saved: format must be png or webp when background is transparent (jpeg has no transparency), so every job using it would be refused.',
    });
    expect(await styles.list(admin)).toEqual([]);
  });
});
