import { afterEach, describe, expect, it, vi } from 'vitest';
import * as atomicFile from '../../src/core/atomic-file.js';
import { FileQuotaStore } from '../../src/internal.js';
import { useTempDirs } from '../helpers/runner-harness.js';

/** The append to the usage day file (a write through its descriptor) fails with the system error each test names. */
vi.mock('../../src/core/atomic-file.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/core/atomic-file.js')>();
  return { ...actual, writeAllAndSync: vi.fn(actual.writeAllAndSync) };
});

const newDir = useTempDirs();
let store: FileQuotaStore | undefined;
afterEach(async () => {
  vi.mocked(atomicFile.writeAllAndSync).mockRestore();
  await store?.close();
  store = undefined;
});

/** A system error as Node raises one for a write through a descriptor: a code and a syscall, no path. */
function systemError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: failed, write`), { code, errno: -1, syscall: 'write' });
}

async function settleMeets(code: string): Promise<unknown> {
  const now = Date.now();
  store = new FileQuotaStore({ dir: await newDir(), clock: () => now });
  await store.open();
  await store.reserve({ jobId: 'job-1', userKey: 'slack:U1', scopeKey: 'slack:T1', estimateUsd: 0.05, limits: {}, now });
  await store.markSent('job-1');
  vi.mocked(atomicFile.writeAllAndSync).mockRejectedValueOnce(systemError(code));
  return store.settle('job-1', 0.05).catch((error: unknown) => error);
}

describe('a settle whose append to its usage day file fails with a system error', () => {
  it.each(['ENOSPC', 'EROFS', 'EACCES'])('refuses the step as a ledger file the operator must mend when it lasts (%s), naming the day file', async (code) => {
    const error = await settleMeets(code);
    expect(error).toMatchObject({ code: 'ledger_unreadable', path: expect.stringMatching(new RegExp(`^${store!.usagePath}/\\d{4}-\\d{2}-\\d{2}\\.jsonl$`)) });
  });

  it.each(['EAGAIN', 'EINTR', 'EMFILE', 'EIO'])('leaves a passing one (%s) the error it is: the next try may not meet it', async (code) => {
    const error = await settleMeets(code);
    expect(error).toMatchObject({ code });
    expect(error).not.toMatchObject({ code: 'ledger_unreadable' });
  });
});
