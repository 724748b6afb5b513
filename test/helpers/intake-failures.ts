import { JobRefusedError, words } from '../../bots/runner/index.js';
import { ConnectionError } from '../../src/index.js';
import { LedgerUnreadableError } from '../../src/internal.js';

/**
 * Why an intake may not take a job, one of each kind the runner's one logging rule (`failureLogLevel`) tells apart, with
 * the code and the log level it gives: a refusal is the member's, a core error the service's or the network's (its code
 * says it), the rest the operator's to read (with the error). Each surface's test runs its intake over every row.
 */
export const INTAKE_FAILURES: [what: string, reason: Error, code: string, level: 'info' | 'warn' | 'error'][] = [
  ['a refusal of the runner’s', new JobRefusedError('restarting', words('refusal.restarting')), 'restarting', 'info'],
  ['Redis gone', new ConnectionError('cannot use Redis at redis://redis.internal:6379: connect ECONNREFUSED'), 'connection_failed', 'warn'],
  ['the spend ledger unreadable', new LedgerUnreadableError('/data/quota-ledger.json', 'is not JSON'), 'ledger_unreadable', 'error'],
  ['a bug of ours', new TypeError("Cannot read properties of undefined (reading 'caps')"), 'internal_error', 'error'],
];

/**
 * A bug of ours whose message holds credentials (a Bearer token, an `sk-` key, as a library echoes a request): logged
 * at `error` with the error, which must show neither (`SECRETS_IN_FAILURE`). Shapes only, never registered as secrets.
 */
export const SECRETS_IN_FAILURE = ['tok_9f8e7d6c5b4a3210ffee', 'sk-live-4f3e2d1c0b9a8f7e6d5c'] as const;
export function failureWithSecrets(): Error {
  return new TypeError(`request failed with headers {"Authorization":"Bearer ${SECRETS_IN_FAILURE[0]}"} and key ${SECRETS_IN_FAILURE[1]}`);
}
