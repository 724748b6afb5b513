import { words } from '../../../bots/runner/index.js';
import { describe, expect, it } from 'vitest';
import { isJobRefusedError, JobRefusedError, POLICY_REFUSAL_CODES, RUNNER_REFUSAL_CODES } from '../../../bots/runner/index.js';
import { BREAKER_CODE, BUDGETS, USER_PACE_CODES } from '../../../src/internal.js';

/** A refusal made by another copy of the runner's module (a second bundle): same name and code, another class. */
function refusalFromAnotherCopy(code: string): Error {
  const error = new Error('refused');
  error.name = 'JobRefusedError';
  return Object.assign(error, { code });
}

describe('isJobRefusedError', () => {
  it('knows every refusal code, the caps’, the breaker’s and the runner’s own (the scope rules’ included), also from another copy of the module', () => {
    const codes = [...BUDGETS.map((b) => b.code), ...USER_PACE_CODES, BREAKER_CODE, ...RUNNER_REFUSAL_CODES];
    expect(codes).toEqual(expect.arrayContaining([...POLICY_REFUSAL_CODES, 'dms_not_enabled', 'queue_full', 'restarting']));
    for (const code of codes) {
      expect(isJobRefusedError(refusalFromAnotherCopy(code)), code).toBe(true);
      expect(isJobRefusedError(new JobRefusedError(code, words('failure.aborted'))), code).toBe(true);
    }
  });

  it('takes no other error for a refusal, whatever its name says', () => {
    expect(isJobRefusedError(refusalFromAnotherCopy('server_error'))).toBe(false);
    expect(isJobRefusedError(new Error('refused'))).toBe(false);
    expect(isJobRefusedError({ name: 'JobRefusedError', code: 'queue_full' })).toBe(false);
  });
});
