import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSignatureCheck, isPublicKeyHex, SIGNATURE_TIMESTAMP_WINDOW } from '../../../bots/discord/verify-signature.js';

function keyPair(): { publicKeyHex: string; signHex(text: string): string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    publicKeyHex: publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('hex'),
    signHex: (text) => sign(null, Buffer.from(text), privateKey).toString('hex'),
  };
}

describe('the signature check of interactions received over HTTP', () => {
  const body = Buffer.from('{"type":1}');
  const timestamp = '1700000000';
  const signedAt = () => 1_700_000_000_000;

  it('accepts Ed25519 over the timestamp followed by the raw body, with the hex public key', () => {
    const keys = keyPair();
    expect(createSignatureCheck(keys.publicKeyHex, signedAt)(timestamp, body, keys.signHex(timestamp + body.toString()))).toBe('valid');
  });

  it('refuses a changed body, a changed timestamp, another key’s signature, and a missing or malformed signature', () => {
    const keys = keyPair();
    const check = createSignatureCheck(keys.publicKeyHex, signedAt);
    const signature = keys.signHex(timestamp + body.toString());
    expect(check(timestamp, Buffer.from('{"type":2}'), signature)).toBe('invalid');
    expect(check('1700000001', body, signature)).toBe('invalid');
    expect(check(timestamp, body, keyPair().signHex(timestamp + body.toString()))).toBe('invalid');
    expect(check(timestamp, body, undefined)).toBe('invalid');
    expect(check(undefined, body, signature)).toBe('invalid');
    expect(check(timestamp, body, 'zz'.repeat(64))).toBe('invalid');
    expect(check(timestamp, body, signature.slice(2))).toBe('invalid');
    expect(check('17e8', body, keys.signHex(`17e8${body.toString()}`))).toBe('invalid');
  });

  it('refuses a real signature stamped more than 5 minutes ago or more than a minute ahead (a captured request played again)', () => {
    const keys = keyPair();
    const signature = keys.signHex(timestamp + body.toString());
    const at = (offsetMs: number) => createSignatureCheck(keys.publicKeyHex, () => 1_700_000_000_000 + offsetMs)(timestamp, body, signature);
    expect(at(SIGNATURE_TIMESTAMP_WINDOW.maxAgeMs)).toBe('valid');
    expect(at(SIGNATURE_TIMESTAMP_WINDOW.maxAgeMs + 1)).toBe('stale');
    expect(at(20 * 60_000)).toBe('stale');
    expect(at(-SIGNATURE_TIMESTAMP_WINDOW.maxAheadMs)).toBe('valid');
    expect(at(-SIGNATURE_TIMESTAMP_WINDOW.maxAheadMs - 1)).toBe('stale');
    expect(at(-20 * 60_000)).toBe('stale');
  });

  it('takes only a 64-hex-digit public key', () => {
    expect(isPublicKeyHex('ab'.repeat(32))).toBe(true);
    expect(isPublicKeyHex('ab'.repeat(31))).toBe(false);
    expect(() => createSignatureCheck('not a key')).toThrow(/64 hex digits/);
  });
});
