import { isIP } from 'node:net';

/**
 * How a Pictor emulator says what it is: every answer it gives carries this
 * header (`1`). A Pictor client that meets it, at an address it believes (see
 * `mayBeEmulator`), keeps that service's jobs in the emulator's ledger, never
 * the account's: nothing was spent.
 */
export const EMULATOR_HEADER = 'x-pictor-emulator';

/** The key an emulator accepts when it is given none (`pictor emulator`, `npm start` without `PICTOR_API_KEY`). */
export const DEV_API_KEY = 'pictor-dev-key';

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
