import type { CapOverridesFile } from './cap-overrides.js';
import { DocumentQuotaStore, type DocumentQuotaStoreOptions } from './DocumentQuotaStore.js';
import { emptyLedger, type Ledger, type LedgerOwner } from './ledger-document.js';
import { createSerialQueue } from './serial-queue.js';
import type { UsageRecord } from './types.js';

/**
 * What several MemoryQuotaStores share, as processes share a ledger file: the
 * ledger, the usage records and the chat admins' caps, behind one lock.
 */
export class MemoryLedger {
  ledger: Ledger = emptyLedger();
  usage: UsageRecord[] = [];
  capOverrides: CapOverridesFile = { version: 1, scopes: {} };
  readonly lock = createSerialQueue();
}

export interface MemoryQuotaStoreOptions extends DocumentQuotaStoreOptions {
  /** The storage to share with other stores (each then stands for a process of its own). Default: a new one. */
  shared?: MemoryLedger | undefined;
}

/**
 * A QuotaStore kept in memory, for tests and for tools that need no record
 * after they exit. The same steps and rules as the file store (both are
 * DocumentQuotaStores); only the storage differs. Stores given the same
 * `shared` ledger behave as processes sharing a file: a store that is closed
 * without ending its reservations is a process that died, whose lease lapses
 * after `leaseMs`.
 */
export class MemoryQuotaStore extends DocumentQuotaStore {
  readonly shared: MemoryLedger;

  constructor(options: MemoryQuotaStoreOptions = {}) {
    super(options);
    this.shared = options.shared ?? new MemoryLedger();
  }

  protected locked<T>(task: () => Promise<T>): Promise<T> {
    return this.shared.lock(task);
  }

  protected load(): Promise<Ledger> {
    return Promise.resolve(structuredClone(this.shared.ledger));
  }

  protected write(ledger: Ledger): Promise<void> {
    this.shared.ledger = structuredClone(ledger);
    return Promise.resolve();
  }

  protected appendUsage(records: UsageRecord[], now: number): Promise<void> {
    this.shared.usage = [...this.shared.usage.filter((r) => r.time >= now - this.usageRetentionMs), ...records.map((r) => ({ ...r }))];
    return Promise.resolve();
  }

  protected readUsageLines(): Promise<UsageRecord[]> {
    return Promise.resolve(this.shared.usage.map((r) => ({ ...r })));
  }

  protected readCapOverrides(): Promise<CapOverridesFile> {
    return Promise.resolve(structuredClone(this.shared.capOverrides));
  }

  protected writeCapOverrides(file: CapOverridesFile): Promise<void> {
    this.shared.capOverrides = structuredClone(file);
    return Promise.resolve();
  }

  protected replaceUsage(records: UsageRecord[]): Promise<void> {
    this.shared.usage = records.map((r) => ({ ...r }));
    return Promise.resolve();
  }

  protected takeLegacySeen(): Promise<string[]> {
    return Promise.resolve([]);
  }

  /** Every store of one shared ledger runs in this process: only the lease tells whether its "process" lives. */
  protected override isOwnerAlive(entry: LedgerOwner, now: number): boolean {
    return super.isOwnerAlive({ ...entry, host: `${entry.host} (memory)` }, now);
  }
}
