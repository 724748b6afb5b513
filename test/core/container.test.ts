import { describe, expect, it } from 'vitest';
import { runsInContainer } from '../../src/core/container.js';

describe("running in Pictor's image", () => {
  it('is what PICTOR_CONTAINER says (the image sets 1); unset is a clone, even in some other container', () => {
    expect(runsInContainer({ PICTOR_CONTAINER: '1' })).toBe(true);
    expect(runsInContainer({ PICTOR_CONTAINER: '0' })).toBe(false);
    expect(runsInContainer({})).toBe(false);
  });

  it('refuses a PICTOR_CONTAINER that is not 1 or 0, naming it', () => {
    expect(() => runsInContainer({ PICTOR_CONTAINER: 'maybe' })).toThrow(/PICTOR_CONTAINER/);
  });
});
