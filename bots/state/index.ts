export * from './StateStore.js';
export { FileStateStore, type FileStateStoreOptions } from './FileStateStore.js';
export { RedisStateStore, DEFAULT_LEASE_MS, type RedisStateStoreOptions } from './RedisStateStore.js';
export { startSweeper, type Sweeper } from './sweeper.js';
export { readStateConfig } from './config.js';
export { askHolderToCancel, cancelWhenAsked } from './cancel-notices.js';
