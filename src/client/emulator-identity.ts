import { isIP } from 'node:net';
import { Client } from 'undici';
import { PATHS } from '../spec/constants.js';
import { endpointURL, normalizeBaseURL } from './base-url.js';

/**
 * How a Pictor emulator says what it is: every answer it gives carries this
 * header (`1`). A Pictor client that meets it, at an address it believes (see
 * `mayBeEmulator`), keeps that service's jobs in the emulator's ledger, never
 * the account's: nothing was spent.
 */
export const EMULATOR_HEADER = 'x-pictor-emulator';

/** The key an emulator accepts when it is given none (`pictor emulator`, `npm start` without `PICTOR_API_KEY`). */
export const DEV_API_KEY = 'pictor-dev-key';

/** Longest the question "are you an emulator?" may take before the answer is taken as "no" (the account's ledger). */
const PROBE_TIMEOUT_MS = 3_000;

/**
 * Whether the header of a service at `baseURL` is believed: only for the
 * emulator's own key or a loopback address (this machine). A remote service
 * given a real key is the account's, whatever it claims, so a misconfigured or
 * hostile server can never take real spending out of the account's ledger.
 */
export function mayBeEmulator(baseURL: string, apiKey: string | undefined): boolean {
  if (apiKey === DEV_API_KEY) return true;
  let host: string;
  try {
    host = new URL(baseURL).hostname;
  } catch {
    return false;
  }
  return isLoopbackHost(host);
}

/** `localhost`, 127.0.0.0/8 and ::1 (with or without brackets, or as an IPv4-mapped address). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const v4 = host.replace(/^::ffff:/, '');
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return isIP(host) === 6 && /^(0{0,4}:){2,7}0{0,3}1$|^::1$/.test(host);
}

/**
 * Asks the service at `baseURL` whether it is a Pictor emulator, when its
 * answer would be believed (`mayBeEmulator`): one `HEAD` request without the
 * key, which a real service answers as a request for nothing (no image, no
 * charge). Any failure — no answer, a timeout, no header — is "no": the job
 * then counts against the account, the safe side.
 */
export async function answersAsEmulator(baseURL: string, apiKey: string | undefined, options: { timeoutMs?: number } = {}): Promise<boolean> {
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
    const response = await client.request({ method: 'HEAD', path: url.pathname, signal: AbortSignal.timeout(timeoutMs) });
    await response.body.dump();
    return response.headers[EMULATOR_HEADER] === '1';
  } catch {
    return false;
  } finally {
    await client.destroy().catch(() => {});
  }
}
