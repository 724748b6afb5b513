import { describe, expect, it } from 'vitest';
import { runsInContainer } from '../../src/core/container.js';

describe('running in a container', () => {
  const none = () => false;
  it('is what PICTOR_CONTAINER says (the image sets 1), whatever the marker files', () => {
    expect(runsInContainer({ PICTOR_CONTAINER: '1' }, none)).toBe(true);
    expect(runsInContainer({ PICTOR_CONTAINER: '0' }, () => true)).toBe(false);
  });

  it("is told by Docker's /.dockerenv or Podman's /run/.containerenv otherwise", () => {
    expect(runsInContainer({}, (path) => path === '/.dockerenv')).toBe(true);
    expect(runsInContainer({}, (path) => path === '/run/.containerenv')).toBe(true);
    expect(runsInContainer({}, none)).toBe(false);
  });

  it('refuses a PICTOR_CONTAINER that is not 1 or 0, naming it', () => {
    expect(() => runsInContainer({ PICTOR_CONTAINER: 'maybe' }, none)).toThrow(/PICTOR_CONTAINER/);
  });
});
