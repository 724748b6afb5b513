import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, readSync } from 'node:fs';
import { access, readFile, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { restoreFromBackup, writeAllAndSync, writeFileAtomically } from '../core/atomic-file.js';
import { CapOverridesFileSchema, type CapOverridesFile } from './cap-overrides.js';
import { DocumentQuotaStore, type DocumentQuotaStoreOptions } from './DocumentQuotaStore.js';
import { LedgerUnreadableError } from './errors.js';
import { withFileLock } from './file-lock.js';
import { emptyLedger, parseLedger, type Ledger } from './ledger-document.js';
import { LEDGER_FILES } from './ledger-files.js';
import type { UsageRecord } from './types.js';
import { UsageRecordSchema } from './usage-records.js';

export interface FileQuotaStoreOptions extends DocumentQuotaStoreOptions {
  /** The data folder; created if missing. */
  dir: string;
  /** Default `quota-ledger.json`. */
  fileName?: string | undefined;
}

const DAY_MS = 24 * 60 * 60_000;
const SeenFileSchema = z.object({ version: z.literal(1), seen: z.record(z.string(), z.number()) });
const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
const CAP_OVERRIDES_REMEDY = "Fix it or move it away and start again (the operator's caps then apply until chat admins set theirs again).";

/** Ledgers open in this process: one store per file per process (processes share it through the lock). */
const OPEN_LEDGERS = new Set<string>();

/**
 * The embedded QuotaStore: one JSON file in the data folder, shared by the
 * processes of one machine, with `usage.jsonl` (one line per settled job) and
 * `cap-overrides.json` (the chat admins' caps) beside it. Storage only: the
 * steps are DocumentQuotaStore's, the rules the rulebook's. Every change
 * takes the ledger's lock file, reads the ledger, changes it and writes it
 * atomically (temporary file, fsync, rename) before it lets go and answers,
 * so two processes never both spend the last dollar and a crash loses
 * nothing that was answered. A commit awaits only its fsyncs: the other
 * steps are synchronous calls on small local files, since a job's `markSent`
 * stands between the limiter's grant and the request leaving, and each awaited
 * call would wait a turn of a busy event loop. The previous version is kept beside it
 * (`<file>.bak`); `open()` checks every file at start: it restores that copy
 * when the ledger is unreadable, and the chat caps' copy likewise.
 */
export class FileQuotaStore extends DocumentQuotaStore {
  readonly path: string;
  readonly #dir: string;
  readonly usagePath: string;
  /** The caps chat admins set per scope (`cap-overrides.json` beside the ledger), written under the ledger's lock. */
  readonly capOverridesPath: string;
  /** When this process last dropped expired usage records (at most once a day). */
  #usagePrunedAt = Number.NEGATIVE_INFINITY;

  constructor(options: FileQuotaStoreOptions) {
    super(options);
    this.#dir = options.dir;
    this.path = resolve(join(options.dir, options.fileName ?? LEDGER_FILES.ledger));
    if (OPEN_LEDGERS.has(this.path)) {
      throw new Error(`the quota ledger ${this.path} is already open in this process; share one FileQuotaStore between the bots`);
    }
    OPEN_LEDGERS.add(this.path);
    this.usagePath = resolve(join(options.dir, LEDGER_FILES.usage));
    this.capOverridesPath = resolve(join(options.dir, LEDGER_FILES.capOverrides));
  }

  get backupPath(): string {
    return `${this.path}.bak`;
  }

  /**
   * Checks every file of the ledger before a surface starts taking jobs. An
   * unreadable ledger (empty, truncated, not a ledger) is moved aside and its
   * backup copy put back — the answer says so; with no good copy it throws
   * LedgerUnreadableError naming the file and what to do. The chat admins'
   * caps likewise; the usage records must be a readable file (a torn line is
   * skipped, not fatal).
   */
  open(): Promise<{ restoredFromBackup: boolean; brokenCopy?: string | undefined; restoredCapOverrides?: boolean | undefined }> {
    return this.serial(() =>
      this.locked(async () => {
        await this.#checkUsageFile();
        const caps = await restoreFromBackup(this.capOverridesPath, `${this.capOverridesPath}.bak`, (text) => CapOverridesFileSchema.safeParse(safeJson(text)).success, this.clock());
        await this.readCapOverrides();
        const ledger = await restoreFromBackup(this.path, this.backupPath, (text) => parseLedger(safeJson(text)).ok, this.clock());
        await this.load();
        return { restoredFromBackup: ledger.restored, brokenCopy: ledger.brokenCopy, ...(caps.restored && { restoredCapOverrides: true }) };
      }),
    );
  }

  /** `usage.jsonl` must be a file this process can read and append to (or not exist yet). */
  async #checkUsageFile(): Promise<void> {
    try {
      const info = await stat(this.usagePath);
      if (!info.isFile()) throw new Error('not a file');
      await access(this.usagePath, constants.R_OK | constants.W_OK);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new LedgerUnreadableError(this.usagePath, 'is not a readable and writable file (the usage records of settled jobs)', {
        cause,
        remedy: 'Move it away (or give this user access to it) and start again: spending is still counted by the ledger, but pictor usage and the chat usage summaries lose the records it held.',
      });
    }
  }

  override async close(): Promise<void> {
    if (this.closed) return;
    await super.close();
    OPEN_LEDGERS.delete(this.path);
  }

  protected async locked<T>(task: () => Promise<T>): Promise<T> {
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    return withFileLock(`${this.path}.lock`, task);
  }

  protected async load(): Promise<Ledger> {
    const read = await this.#read(this.path);
    if (read.ok) return read.ledger;
    if (read.problem === undefined) {
      // No ledger: a fresh start, unless a backup shows there was one (`open()` restores it).
      const backup = await this.#read(this.backupPath);
      if (backup.ok || backup.problem !== undefined) throw new LedgerUnreadableError(this.path, 'is missing although a backup exists');
      return emptyLedger();
    }
    throw new LedgerUnreadableError(this.path, read.problem, { cause: read.cause });
  }

  /** Temporary file, fsync, then the current version becomes the backup and the new one takes its place. */
  protected async write(ledger: Ledger): Promise<void> {
    await writeFileAtomically(this.path, JSON.stringify(ledger), { backupPath: this.backupPath, inline: true });
  }

  async #read(path: string): Promise<{ ok: true; ledger: Ledger } | { ok: false; problem: string | undefined; cause?: unknown }> {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, problem: undefined };
      throw error;
    }
    if (text.trim() === '') return { ok: false, problem: 'is empty' };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      return { ok: false, problem: 'is not JSON (truncated or damaged)', cause };
    }
    const parsed = parseLedger(json);
    return parsed.ok ? parsed : { ok: false, problem: 'is not a spend ledger (unknown shape)', cause: parsed.cause };
  }

  /** Appends records to `usage.jsonl` (0600) and syncs it; drops expired records at most once a day. */
  protected async appendUsage(records: UsageRecord[], now: number): Promise<void> {
    if (now - this.#usagePrunedAt >= DAY_MS) {
      this.#usagePrunedAt = now;
      const lines = await this.readUsageLines();
      const kept = lines.filter((r) => r.time >= now - this.usageRetentionMs);
      if (kept.length < lines.length) await this.replaceUsage(kept);
    }
    if (records.length === 0) return;
    const fd = openSync(this.usagePath, 'a+', 0o600);
    try {
      // A line a crash cut short is left as it is (it is skipped when read); the next record starts on a line of its own.
      const { size } = fstatSync(fd);
      const last = Buffer.alloc(1);
      const cut = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
      await writeAllAndSync(fd, `${cut ? '\n' : ''}${records.map((r) => `${JSON.stringify(r)}\n`).join('')}`);
    } finally {
      closeSync(fd);
    }
  }

  /** Every readable line of `usage.jsonl`, in file order (a line cut short by a crash is skipped). */
  protected async readUsageLines(): Promise<UsageRecord[]> {
    let text: string;
    try {
      text = await readFile(this.usagePath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const records: UsageRecord[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const parsed = UsageRecordSchema.safeParse(JSON.parse(line));
        if (parsed.success) records.push(parsed.data);
      } catch {
        // A torn last line: its settle never reached the ledger either.
      }
    }
    return records;
  }

  /** `cap-overrides.json`, or none set when it does not exist; an unreadable one is an error naming it (never silently dropped). */
  protected async readCapOverrides(): Promise<CapOverridesFile> {
    let text: string;
    try {
      text = readFileSync(this.capOverridesPath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, scopes: {} };
      throw new LedgerUnreadableError(this.capOverridesPath, "cannot be read (the chat admins' caps)", { cause: error, remedy: CAP_OVERRIDES_REMEDY });
    }
    try {
      return CapOverridesFileSchema.parse(JSON.parse(text));
    } catch (cause) {
      throw new LedgerUnreadableError(this.capOverridesPath, "is damaged (the chat admins' caps), and no good backup copy (.bak) is beside it", {
        cause,
        remedy: CAP_OVERRIDES_REMEDY,
      });
    }
  }

  protected async replaceUsage(records: UsageRecord[]): Promise<void> {
    await writeFileAtomically(this.usagePath, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  }

  /** `slack-replay.json` of older versions: `{ version: 1, seen: { <id>: <forget after, ms> } }`; removed once read. */
  protected async takeLegacySeen(now: number): Promise<string[]> {
    const path = join(this.#dir, 'slack-replay.json');
    const parsed = SeenFileSchema.safeParse(safeJson(await readFile(path, 'utf8').catch(() => '')));
    await rm(path, { force: true });
    return parsed.success ? Object.entries(parsed.data.seen).flatMap(([id, until]) => (until > now ? [id] : [])) : [];
  }

  protected async writeCapOverrides(file: CapOverridesFile): Promise<void> {
    await writeFileAtomically(this.capOverridesPath, JSON.stringify(file), { backupPath: `${this.capOverridesPath}.bak` });
  }
}
