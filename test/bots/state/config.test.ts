import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readStateConfig } from '../../../bots/state/index.js';

describe('the bots’ state settings', () => {
  it('leave the lease to the Redis store when PICTOR_REPLICA_LEASE_SECONDS is unset, and give it in ms when set', () => {
    expect(readStateConfig({}).leaseMs).toBeUndefined();
    expect(readStateConfig({ PICTOR_REPLICA_LEASE_SECONDS: '0.5' }).leaseMs).toBe(500);
    expect(() => readStateConfig({ PICTOR_REPLICA_LEASE_SECONDS: '0.05' })).toThrow(/PICTOR_REPLICA_LEASE_SECONDS/);
  });
});

describe('PICTOR_KEPT_IMAGES_MB', () => {
  it('takes a whole number of megabytes from 16, as the README’s table says, and refuses less by name', () => {
    const row = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8').split('\n').find((line) => line.startsWith('| `PICTOR_KEPT_IMAGES_MB`'));
    expect(row).toContain('a whole number, 16 or more');
    expect(readStateConfig({ PICTOR_KEPT_IMAGES_MB: '16' }).keptImagesBytes).toBe(16 * 2 ** 20);
    expect(() => readStateConfig({ PICTOR_KEPT_IMAGES_MB: '15' })).toThrow(/PICTOR_KEPT_IMAGES_MB/);
    expect(() => readStateConfig({ PICTOR_KEPT_IMAGES_MB: '16.5' })).toThrow(/PICTOR_KEPT_IMAGES_MB/);
  });
});
