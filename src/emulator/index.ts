export { createEmulator, type Emulator } from './emulator.js';
export { DEV_API_KEY, DEFAULT_SETTINGS, type EmulatorLogger, type EmulatorOptions, type EmulatorSettings } from './options.js';
export { FAULT_NAMES, EmulatedConnectionReset, type FaultName, type InjectFaultOptions, type PendingFault, type Route } from './faults.js';
export type { EmulatorServer, ListenOptions } from './node-server.js';
export type { EmulatorStats, ReceivedRequest } from './request-log.js';
export type { ReceivedImagePart } from './parsed-call.js';
export { SERVICE_LIKE_LATENCY_MS, describeTiming } from './timing.js';
export { emulatorBanner, type BannerOptions } from './banner.js';
