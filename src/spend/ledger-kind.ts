import { answersAsEmulator } from '../client/emulator-identity.js';
import type { CoreConfig } from '../config.js';
import type { LedgerKind } from './open-store.js';

/**
 * The ledger a process's jobs count in: the emulator's own when a Pictor
 * emulator answers them — the embedded one (no `PICTOR_BASE_URL`), or one
 * `PICTOR_BASE_URL` points at that says so (`answersAsEmulator`: believed for
 * the emulator's own key or a loopback address only) — else the account's.
 */
export async function ledgerKindOf(config: Pick<CoreConfig, 'baseURL' | 'apiKey'>, options: { signal?: AbortSignal | undefined } = {}): Promise<LedgerKind> {
  if (!config.baseURL) return 'emulator';
  return (await answersAsEmulator(config.baseURL, config.apiKey, options)) ? 'emulator' : 'account';
}
