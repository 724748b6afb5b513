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
