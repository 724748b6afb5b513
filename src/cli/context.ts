import type { Writable } from 'node:stream';
import type { PictorClient } from '../client/PictorClient.js';
import type { Connection } from '../connect.js';
import type { SpendWatch } from '../spend/spend-guard.js';

/** What a command needs from the outside world; tests pass their own. */
export interface CliContext {
  stdout(line: string): void;
  stderr(line: string): void;
  /**
   * Opens a connection to the configured service or an embedded emulator; `onJob` is told of each job the spend guard
   * reserved, with its watch (whose `settled` says how the ledger ended it). Aborting `signal` (Ctrl+C) gives connecting up at once: it rejects with the signal's reason, nothing sent.
   */
  connect(options?: { onJob?: (watch: SpendWatch) => void; signal?: AbortSignal }): Promise<Connection>;
  client(connection: Connection): PictorClient;
  env: NodeJS.ProcessEnv;
  /** The directory the user ran the command from: relative `--image`/`--out` paths start here. Default: the process's. */
  cwd?: string | undefined;
  /** stderr when it is a terminal (for the live status line); undefined elsewhere. */
  terminal?: (Writable & { isTTY?: boolean }) | undefined;
  /** Off a terminal, how often a progress line is printed. Default 5 s. */
  progressEveryMs?: number | undefined;
}

/** The streams and settings `main` runs with; the entry point passes the process's own. */
export type CliIo = Pick<CliContext, 'stdout' | 'stderr' | 'terminal' | 'progressEveryMs'> & {
  cwd?: string | undefined;
  /** stdout is a terminal: `pictor usage` draws its bar chart there. */
  stdoutIsTerminal?: boolean | undefined;
};
