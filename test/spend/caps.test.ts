import { SERVICE_DATA_DIR } from '../../bots/main.js';
import { describe, expect, it } from 'vitest';
import { readRunnerConfig } from '../../bots/runner/index.js';
import { readCoreConfig } from '../../src/config.js';
import { accountCaps, readSpendCaps, userStateDir } from '../../src/internal.js';

describe('the spending caps from the environment', () => {
  it('reads every cap in USD, blank or unset meaning no cap', () => {
    expect(
      readSpendCaps({
        PICTOR_ACCOUNT_DAILY_USD: '20',
        PICTOR_ACCOUNT_MONTHLY_USD: '300.5',
        PICTOR_USER_DAILY_USD: '1',
        PICTOR_USER_MONTHLY_USD: ' ',
        PICTOR_SCOPE_DAILY_USD: '0',
      }),
    ).toEqual({ accountDailyUsd: 20, accountMonthlyUsd: 300.5, userDailyUsd: 1, userMonthlyUsd: undefined, scopeDailyUsd: 0, scopeMonthlyUsd: undefined });
  });

  it('names the variable and what it takes when a value is wrong', () => {
    expect(() => readSpendCaps({ PICTOR_ACCOUNT_MONTHLY_USD: '-5' })).toThrow(
      expect.objectContaining({ code: 'validation_error', param: 'PICTOR_ACCOUNT_MONTHLY_USD', message: expect.stringContaining('a number of US dollars, 0 or more') }),
    );
  });

  it('is the one parser behind the core config (CLI), whose caps the job runner config takes (npm start reads them once)', () => {
    const env = { PICTOR_ACCOUNT_DAILY_USD: '5', PICTOR_SCOPE_MONTHLY_USD: '50' };
    expect(readCoreConfig(env).spend.caps).toEqual(readSpendCaps(env));
    expect(readRunnerConfig(env, readCoreConfig(env).spend.caps).limits).toMatchObject({ accountDailyUsd: 5, scopeMonthlyUsd: 50 });
    expect(() => readCoreConfig({ PICTOR_USER_MONTHLY_USD: 'lots' })).toThrow(expect.objectContaining({ param: 'PICTOR_USER_MONTHLY_USD' }));
    expect(accountCaps(readSpendCaps(env))).toEqual({ accountDailyUsd: 5, accountMonthlyUsd: undefined });
  });

  it('puts the CLI ledger in the user state folder by default: $XDG_STATE_HOME/pictor, else ~/.local/state/pictor', () => {
    expect(readCoreConfig({ XDG_STATE_HOME: '/var/state/ann' }).spend.dataDir).toBe('/var/state/ann/pictor');
    expect(readCoreConfig({ HOME: '/home/ann' }).spend.dataDir).toBe('/home/ann/.local/state/pictor');
    // A relative XDG_STATE_HOME is not valid (XDG base directories): ignored.
    expect(userStateDir({ XDG_STATE_HOME: 'state', HOME: '/home/ann' })).toBe('/home/ann/.local/state/pictor');
    expect(readCoreConfig({ PICTOR_DATA_DIR: '/srv/pictor', XDG_STATE_HOME: '/var/state/ann' }).spend.dataDir).toBe('/srv/pictor');
    // npm start keeps its own default, read in the same one place.
    expect(readCoreConfig({ XDG_STATE_HOME: '/var/state/ann' }, { defaultDataDir: SERVICE_DATA_DIR }).spend.dataDir).toBe('./.data');
  });
});
