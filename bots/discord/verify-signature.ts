import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { INTERACTION_MAX_AHEAD_MS } from '../state/interaction-token.js';

/** DER header of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the raw 32-byte key follows it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const HEX_KEY = /^[0-9a-f]{64}$/i;
const HEX_SIGNATURE = /^[0-9a-f]{128}$/i;
const UNIX_SECONDS = /^\d{1,12}$/;

/**
 * How far from this process's clock a signed request's `X-Signature-Timestamp` may be. Discord signs the
 * POST as it sends it and wants an answer within 3 s, so a genuine request is stamped about now: one stamped
 * earlier is a captured request played again, and one stamped ahead was signed for later. The margins are
 * for clocks that drift (the same ones Slack's requests get).
 */
export const SIGNATURE_TIMESTAMP_WINDOW = { maxAgeMs: 5 * 60_000, maxAheadMs: INTERACTION_MAX_AHEAD_MS } as const;

/** What the check found: Discord's signature over a fresh timestamp, a signature that does not verify, or a real one stamped too far from now. */
export type SignatureVerdict = 'valid' | 'invalid' | 'stale';

/** Whether `hex` has the form of an application's public key (the portal's "Public Key": 32 bytes as 64 hex digits). */
export function isPublicKeyHex(hex: string): boolean {
  return HEX_KEY.test(hex);
}

/**
 * Checks Discord's signature of an interaction delivered over HTTP: Ed25519 over
 * the `X-Signature-Timestamp` header followed by the raw body, with the
 * application's public key; the signature is `X-Signature-Ed25519`, in hex.
 * A signature that verifies is still refused (`stale`) when its timestamp
 * (Unix seconds) is outside `SIGNATURE_TIMESTAMP_WINDOW` of `now`.
 */
export function createSignatureCheck(
  publicKeyHex: string,
  now: () => number = Date.now,
): (timestamp: string | undefined, rawBody: Buffer, signatureHex: string | undefined) => SignatureVerdict {
  if (!isPublicKeyHex(publicKeyHex)) throw new Error('a Discord public key is 64 hex digits');
  const key: KeyObject = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKeyHex, 'hex')]), format: 'der', type: 'spki' });
  return (timestamp, rawBody, signatureHex) => {
    if (!timestamp || !UNIX_SECONDS.test(timestamp) || !signatureHex || !HEX_SIGNATURE.test(signatureHex)) return 'invalid';
    let signed: boolean;
    try {
      signed = verify(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), rawBody]), key, Buffer.from(signatureHex, 'hex'));
    } catch {
      signed = false;
    }
    if (!signed) return 'invalid';
    const offsetMs = Number(timestamp) * 1000 - now();
    return offsetMs < -SIGNATURE_TIMESTAMP_WINDOW.maxAgeMs || offsetMs > SIGNATURE_TIMESTAMP_WINDOW.maxAheadMs ? 'stale' : 'valid';
  };
}
