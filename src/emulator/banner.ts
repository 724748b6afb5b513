import { describeTiming } from './timing.js';

export interface BannerOptions {
  /** Where it listens, e.g. `http://127.0.0.1:4010`. */
  url: string;
  /** The key to print (the development key); undefined when the user's own key is used (it is never printed). */
  printableKey: string | undefined;
  /** Where the key comes from when it is not printed, e.g. `your PICTOR_API_KEY`. */
  keySource?: string;
  latencyMs: number;
  latencyScales: boolean;
  /** How to change the timing where it was started, e.g. `--latency-ms` or `PICTOR_EMULATOR_LATENCY_MS`. */
  latencySetting: string;
  /**
   * Runs as Pictor's own npm script (`runsAsPictorScript`; `npm start` always does): the command to try is
   * `npm run pictor -- …`. False where Pictor is an installed package (`npx pictor emulator`): `npx pictor …`. Default true.
   */
  ownNpmScript?: boolean | undefined;
  /** Started in a container (`runsInContainer`): the command to try is the container's, run from the host. */
  container?: boolean | undefined;
}

/**
 * The lines an entry point prints when it starts an emulator: that it is the
 * emulator (no money is spent), how fast it answers, and a command that runs
 * as printed against it where it was started (this repository, or a project that installed Pictor).
 */
export function emulatorBanner(options: BannerOptions): string[] {
  const key = options.printableKey;
  const keyAssignment = key ? ` PICTOR_API_KEY=${key}` : '';
  const pictor = options.ownNpmScript === false ? 'npx pictor' : 'npm run pictor --';
  return [
    `Image service emulator listening on ${options.url} (a local stand-in: no money is spent)`,
    key ? `API key: ${key}` : `API key: ${options.keySource ?? 'your PICTOR_API_KEY'} (not printed)`,
    `Timing: ${describeTiming(options.latencyMs, options.latencyScales)}; set ${options.latencySetting} to change it (0 = instant).`,
    options.container
      ? // Inside the image: the CLI is dist/cli/pictor.js, the working folder is read-only, and the address is the container's own loopback.
        `Try, from the host: docker compose exec pictor node dist/cli/pictor.js generate --prompt "a lighthouse at dusk" --out /data/ (or docker exec <container> …; it uses an emulator of its own)`
      : `Try: PICTOR_BASE_URL=${options.url}${keyAssignment} ${pictor} generate --prompt "a lighthouse at dusk"`,
  ];
}
