import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/** DER header of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the raw 32-byte key follows it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const HEX_KEY = /^[0-9a-f]{64}$/i;
const HEX_SIGNATURE = /^[0-9a-f]{128}$/i;

/** Whether `hex` has the form of an application's public key (the portal's "Public Key": 32 bytes as 64 hex digits). */
export function isPublicKeyHex(hex: string): boolean {
  return HEX_KEY.test(hex);
}

/**
 * Checks Discord's signature of an interaction delivered over HTTP: Ed25519 over
 * the `X-Signature-Timestamp` header followed by the raw body, with the
 * application's public key; the signature is `X-Signature-Ed25519`, in hex.
 */
export function createSignatureCheck(publicKeyHex: string): (timestamp: string | undefined, rawBody: Buffer, signatureHex: string | undefined) => boolean {
  if (!isPublicKeyHex(publicKeyHex)) throw new Error('a Discord public key is 64 hex digits');
  const key: KeyObject = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKeyHex, 'hex')]), format: 'der', type: 'spki' });
  return (timestamp, rawBody, signatureHex) => {
    if (!timestamp || !signatureHex || !HEX_SIGNATURE.test(signatureHex)) return false;
    try {
      return verify(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), rawBody]), key, Buffer.from(signatureHex, 'hex'));
    } catch {
      return false;
    }
  };
}
