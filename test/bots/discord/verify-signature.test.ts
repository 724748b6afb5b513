import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSignatureCheck, isPublicKeyHex } from '../../../bots/discord/verify-signature.js';

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

  it('accepts Ed25519 over the timestamp followed by the raw body, with the hex public key', () => {
    const keys = keyPair();
    expect(createSignatureCheck(keys.publicKeyHex)(timestamp, body, keys.signHex(timestamp + body.toString()))).toBe(true);
  });

  it('refuses a changed body, a changed timestamp, another key’s signature, and a missing or malformed signature', () => {
    const keys = keyPair();
    const check = createSignatureCheck(keys.publicKeyHex);
    const signature = keys.signHex(timestamp + body.toString());
    expect(check(timestamp, Buffer.from('{"type":2}'), signature)).toBe(false);
    expect(check('1700000001', body, signature)).toBe(false);
    expect(check(timestamp, body, keyPair().signHex(timestamp + body.toString()))).toBe(false);
    expect(check(timestamp, body, undefined)).toBe(false);
    expect(check(undefined, body, signature)).toBe(false);
    expect(check(timestamp, body, 'zz'.repeat(64))).toBe(false);
    expect(check(timestamp, body, signature.slice(2))).toBe(false);
  });

  it('takes only a 64-hex-digit public key', () => {
    expect(isPublicKeyHex('ab'.repeat(32))).toBe(true);
    expect(isPublicKeyHex('ab'.repeat(31))).toBe(false);
    expect(() => createSignatureCheck('not a key')).toThrow(/64 hex digits/);
  });
});
