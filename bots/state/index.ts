export * from './StateStore.js';
export { FileStateStore, type FileStateStoreOptions } from './FileStateStore.js';
export { RedisStateStore, type RedisStateStoreOptions } from './RedisStateStore.js';
export { botSpaces, digestKeyOf, stateKeyOf, MAX_KEPT_IMAGE_BYTES, DEFAULT_KEPT_IMAGES_MB, type BotSpaces, type SpaceSettings } from './spaces.js';
export { openBotState, type BotState, type OpenBotStateOptions } from './open-state.js';
export { HISTORY_BOUNDS, historyOf, historyOfScope, keepInHistory, type HistoryItem } from './history.js';
export { startSweeper, type Sweeper } from './sweeper.js';
export { readStateConfig } from './config.js';
export { askHolderToCancel, cancelWhenAsked } from './cancel-notices.js';
