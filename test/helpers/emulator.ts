import { afterAll, afterEach, beforeAll, onTestFinished, vi } from 'vitest';
import { PictorClient, type PictorClientOptions } from '../../src/index.js';
import { createEmulator, DEFAULT_SETTINGS, DEV_API_KEY, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';

/**
 * One emulator listening on a free loopback port for a whole test file,
 * reset between tests. `client()` makes a client pointed at it.
 */
export function useEmulator(options: EmulatorOptions = {}) {
  const state: { emulator: Emulator; url: string; close: () => Promise<void> } = {} as never;
  beforeAll(async () => {
    state.emulator = createEmulator(options);
    const server = await state.emulator.listen({ port: 0 });
    state.url = server.url;
    state.close = server.close;
  });
  afterEach(() => {
    state.emulator.reset();
    state.emulator.configure({ ...DEFAULT_SETTINGS, ...options });
  });
  afterAll(async () => {
    await state.close();
  });
  return {
    get emulator() {
      return state.emulator;
    },
    get url() {
      return state.url;
    },
    client(extra: PictorClientOptions = {}) {
      return new PictorClient({ baseURL: state.url, apiKey: DEV_API_KEY, ...extra });
    },
  };
}

/** Answered once the emulator is handed a request (over HTTP, as the client sends it): the moment a test may cancel a running request. */
export function requestReceived(emulator: Emulator): Promise<void> {
  const { fetch } = emulator;
  return new Promise((resolve) => {
    const spy = vi.spyOn(emulator, 'fetch').mockImplementation((...args) => {
      resolve();
      return fetch(...args);
    });
    onTestFinished(() => spy.mockRestore());
  });
}
