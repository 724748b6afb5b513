import { Client } from 'undici';
import { PATHS } from '../spec/constants.js';
import { EMULATOR_HEADER, mayBeEmulator } from '../core/emulator-identity.js';
import { endpointURL, normalizeBaseURL } from './base-url.js';

export { DEV_API_KEY, EMULATOR_HEADER, isLoopbackHost, mayBeEmulator } from '../core/emulator-identity.js';

/** Longest the question "are you an emulator?" may take before the answer is taken as "no" (the account's ledger). */
const PROBE_TIMEOUT_MS = 3_000;

/**
 * Asks the service at `baseURL` whether it is a Pictor emulator, when its
 * answer would be believed (`mayBeEmulator`): one `HEAD` request without the
 * key, which a real service answers as a request for nothing (no image, no
 * charge). Any failure — no answer, a timeout, no header — is "no": the job
 * then counts against the account, the safe side.
 */
export async function answersAsEmulator(
  baseURL: string,
  apiKey: string | undefined,
  options: {
    timeoutMs?: number;
    /** Gives up the question at once when aborted (a Ctrl+C while connecting); the answer is then "no". */
    signal?: AbortSignal | undefined;
  } = {},
): Promise<boolean> {
  if (!mayBeEmulator(baseURL, apiKey)) return false;
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS;
  let url: URL;
  try {
    url = new URL(endpointURL(normalizeBaseURL(baseURL), PATHS.generations));
  } catch {
    return false;
  }
  const client = new Client(url.origin, { connectTimeout: timeoutMs, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  try {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
    const response = await client.request({ method: 'HEAD', path: url.pathname, signal });
    await response.body.dump();
    return response.headers[EMULATOR_HEADER] === '1';
  } catch {
    return false;
  } finally {
    await client.destroy().catch(() => {});
  }
}
