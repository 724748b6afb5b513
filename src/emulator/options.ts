import { DEV_API_KEY } from '../core/emulator-identity.js';
import { LIMITS } from '../spec/index.js';

/** The key the emulator accepts when no `apiKeys` are given. */
export { DEV_API_KEY };

/** Where the emulator reports its own failures (a pino logger fits). */
export interface EmulatorLogger {
  error(details: object, message?: string): void;
}

/**
 * How the emulator behaves. Every setting can be given to `createEmulator` and
 * changed later with `emulator.configure()`.
 */
export interface EmulatorSettings {
  /** Bearer keys that are accepted. Default `[DEV_API_KEY]`. */
  apiKeys: readonly string[];
  /**
   * Time each image takes, spread evenly across its partials and its completed
   * event. Default 0 (instant). With `latencyScales`, the time of a
   * medium-quality 1024×1024 image, scaled for the others.
   */
  latencyMs: number;
  /**
   * Service-like timing: `latencyMs` is scaled by quality (low ×0.5, high ×2)
   * and by size (pixels / 1024²). Default false: every image takes `latencyMs`.
   */
  latencyScales: boolean;
  /** Images per minute (token bucket of that capacity, refilled continuously); `undefined` or 0 = no limit. */
  imagesPerMinute: number | undefined;
  /**
   * Image requests (authorized) being answered at once, streams included until they end; one more is answered
   * at once with 429 `rate_limit_exceeded` and `Retry-After`, as the service answers too many at once. It
   * bounds the emulator's share of the process's image work (src/core/image-work.ts), which the bots' previews
   * and fits wait in too. Default 32 (above the most jobs a bot runs at once by default, 4).
   */
  maxRequestsInFlight: number;
  /** Answer every image request with 429 `insufficient_quota`. Default false. */
  quotaExhausted: boolean;
  /** A prompt containing this text (case-insensitive) is refused with `moderation_blocked`; '' or undefined = never. Default `"forbidden"`. */
  moderationMarker: string | undefined;
  /** Largest accepted edit input file, in bytes; a larger one gets 413. Default 50 MB. */
  maxImageBytes: number;
  /** Partials per image when a streamed request does not say `partial_images`. Default 2. */
  defaultPartialImages: number;
  /**
   * Pads every image sent (partials and final, streamed or not) to at least this
   * many bytes with a chunk that decoders ignore, so a test can force huge events
   * (base64 makes the event about 4/3 of this). Default 0 = no padding.
   */
  padImageBytes: number;
  /** How many received requests `emulator.requests` keeps (oldest dropped first). Default 200. */
  maxRecordedRequests: number;
  /**
   * Keep each edit image's bytes in `emulator.requests` (`images[i].bytes`), for
   * tests that compare them. Default false: the log keeps sizes, types and
   * SHA-256 hashes only, so a long-running emulator does not hold every image it was sent.
   */
  recordImageBytes: boolean;
  /** Told about internal failures (answered as 500 `server_error`). Default none. */
  logger: EmulatorLogger | undefined;
  /**
   * Every answer carries `x-pictor-emulator: 1` (and a `HEAD` request, not
   * recorded, is answered with it alone), so a Pictor client keeps the jobs it
   * sends here in the emulator's ledger, never the account's. Default true;
   * false makes it pose as the real service (tests of the account's ledger).
   */
  identifyAsEmulator: boolean;
}

export type EmulatorOptions = Partial<EmulatorSettings>;

export const DEFAULT_SETTINGS: Readonly<EmulatorSettings> = {
  apiKeys: [DEV_API_KEY],
  latencyMs: 0,
  latencyScales: false,
  imagesPerMinute: undefined,
  maxRequestsInFlight: 32,
  quotaExhausted: false,
  moderationMarker: 'forbidden',
  maxImageBytes: LIMITS.editImageMaxBytes,
  defaultPartialImages: 2,
  padImageBytes: 0,
  maxRecordedRequests: 200,
  recordImageBytes: false,
  logger: undefined,
  identifyAsEmulator: true,
};

/** Applies a patch to settings; a key that is present (even as undefined) replaces the setting. */
export function applySettings(current: EmulatorSettings, patch: EmulatorOptions): EmulatorSettings {
  const next: EmulatorSettings = { ...current };
  for (const key of Object.keys(patch) as (keyof EmulatorSettings)[]) {
    const value = patch[key];
    (next as unknown as Record<string, unknown>)[key] = value === undefined ? undefinedMeaning(key) : value;
  }
  return checkSettings(next);
}

/** What `undefined` means for each setting: "none" where that makes sense, the default otherwise. */
function undefinedMeaning(key: keyof EmulatorSettings): unknown {
  if (key === 'imagesPerMinute' || key === 'moderationMarker' || key === 'logger') return undefined;
  return DEFAULT_SETTINGS[key];
}

function checkSettings(s: EmulatorSettings): EmulatorSettings {
  const nonNegative = (name: string, v: number) => {
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`emulator option ${name} must be a number of at least 0, got ${v}`);
  };
  nonNegative('latencyMs', s.latencyMs);
  nonNegative('maxImageBytes', s.maxImageBytes);
  nonNegative('padImageBytes', s.padImageBytes);
  nonNegative('maxRecordedRequests', s.maxRecordedRequests);
  if (!Number.isInteger(s.maxRequestsInFlight) || s.maxRequestsInFlight < 1) {
    throw new RangeError(`emulator option maxRequestsInFlight must be a whole number of at least 1, got ${s.maxRequestsInFlight}`);
  }
  if (s.imagesPerMinute !== undefined) nonNegative('imagesPerMinute', s.imagesPerMinute);
  if (!Number.isInteger(s.defaultPartialImages) || s.defaultPartialImages < LIMITS.partialImagesMin || s.defaultPartialImages > LIMITS.partialImagesMax) {
    throw new RangeError(
      `emulator option defaultPartialImages must be an integer from ${LIMITS.partialImagesMin} to ${LIMITS.partialImagesMax}, got ${s.defaultPartialImages}`,
    );
  }
  if (!Array.isArray(s.apiKeys) || s.apiKeys.some((k) => typeof k !== 'string' || k.length === 0)) {
    throw new TypeError('emulator option apiKeys must be a list of non-empty strings');
  }
  return { ...s, apiKeys: [...s.apiKeys] };
}
