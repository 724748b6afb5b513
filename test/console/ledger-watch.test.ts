import { EventEmitter } from 'node:events';
import type { watch } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LEDGER_WRITES_SETTLE_MS, watchLedgerFolder } from '../../src/console/ledger-watch.js';
import { LEDGER_FILES } from '../../src/spend/ledger-files.js';

const quiet = { warn() {}, info() {}, error() {}, debug() {} };

/** A folder watch that the test drives: `write(name)` is the event a write of `name` in the folder gives. */
function drivenWatch() {
  let listener: ((event: string, name: string | null) => void) | undefined;
  const watchOf = ((_dir: string, _options: unknown, onChange: (event: string, name: string | null) => void) => {
    listener = onChange;
    return { on: () => undefined, close: () => (listener = undefined) };
  }) as unknown as typeof watch;
  return { watchOf, write: (name: string | null) => listener?.('rename', name), closed: () => listener === undefined };
}

describe('the watch of a file ledger’s folder', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('tells a quarter of a second after the first write of a burst, even while writes keep coming every 100 ms', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const folder = drivenWatch();
    const told: number[] = [];
    const watching = watchLedgerFolder('/a/ledger/folder', () => told.push(Date.now()), quiet, { watch: folder.watchOf });
    // A busy account: another process settles a job every 100 ms, for two seconds.
    const start = Date.now();
    const writes: number[] = [];
    for (let t = 0; t < 2000; t += 100) {
      writes.push(Date.now());
      folder.write(LEDGER_FILES.ledger);
      await vi.advanceTimersByTimeAsync(100);
    }
    await vi.advanceTimersByTimeAsync(LEDGER_WRITES_SETTLE_MS);
    // Every write is told at most a quarter of a second after it (the alert watcher bounds the checks they call for).
    const late = writes.filter((at) => !told.some((tell) => tell > at - 1 && tell <= at + LEDGER_WRITES_SETTLE_MS)).map((at) => at - start);
    expect(late).toEqual([]);
    expect(told.length).toBeGreaterThan(1);
    watching?.close();
  });

  it('tells once per burst, at most a quarter of a second after its first write', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const folder = drivenWatch();
    const changed = vi.fn();
    const watching = watchLedgerFolder('/a/ledger/folder', changed, quiet, { watch: folder.watchOf });
    folder.write(LEDGER_FILES.ledger);
    folder.write(LEDGER_FILES.ledger);
    await vi.advanceTimersByTimeAsync(LEDGER_WRITES_SETTLE_MS - 1);
    expect(changed).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(changed).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(LEDGER_WRITES_SETTLE_MS * 4);
    expect(changed).toHaveBeenCalledTimes(1);
    watching?.close();
  });

  it('follows the ledger file only: every settle rewrites it, whatever else the folder holds', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const folder = drivenWatch();
    const changed = vi.fn();
    const watching = watchLedgerFolder('/a/ledger/folder', changed, quiet, { watch: folder.watchOf });
    folder.write(LEDGER_FILES.usage);
    folder.write('console-alerts.json');
    folder.write(`${LEDGER_FILES.ledger}.tmp`);
    await vi.advanceTimersByTimeAsync(LEDGER_WRITES_SETTLE_MS * 2);
    expect(changed).not.toHaveBeenCalled();
    // A platform that does not name the file: it may be the ledger.
    folder.write(null);
    await vi.advanceTimersByTimeAsync(LEDGER_WRITES_SETTLE_MS);
    expect(changed).toHaveBeenCalledTimes(1);
    watching?.close();
    expect(folder.closed()).toBe(true);
  });

  it('says in the log (warn) when the folder cannot be watched, and gives no watch back: the clock’s check is then the only one', () => {
    const warned: unknown[] = [];
    const logger = { ...quiet, warn: (fields: unknown) => void warned.push(fields) };
    const cannot = (() => {
      throw Object.assign(new Error('no watch here'), { code: 'ENOSYS' });
    }) as unknown as typeof watch;
    const watching = watchLedgerFolder('/a/ledger/folder', vi.fn(), logger, { watch: cannot });
    expect(watching).toBeUndefined();
    expect(warned).toEqual([expect.objectContaining({ dir: '/a/ledger/folder' })]);
  });

  it('says in the log (warn) when the watch fails later, and closes it', () => {
    const warned: unknown[] = [];
    const logger = { ...quiet, warn: (fields: unknown) => void warned.push(fields) };
    const failing = new EventEmitter();
    let closed = false;
    const watchOf = (() => Object.assign(failing, { close: () => void (closed = true) })) as unknown as typeof watch;
    const watching = watchLedgerFolder('/a/ledger/folder', vi.fn(), logger, { watch: watchOf });
    expect(watching).toBeDefined();
    failing.emit('error', Object.assign(new Error('the folder went away'), { code: 'EPERM' }));
    expect(warned).toEqual([expect.objectContaining({ dir: '/a/ledger/folder' })]);
    expect(closed).toBe(true);
  });
});
