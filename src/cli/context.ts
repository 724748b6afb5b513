import type { PictorClient } from '../client/PictorClient.js';
import type { Connection } from '../connect.js';

/** What a command needs from the outside world; tests pass their own. */
export interface CliContext {
  stdout(line: string): void;
  stderr(line: string): void;
  /** Opens a connection to the configured service or an embedded emulator. */
  connect(): Promise<Connection>;
  client(connection: Connection): PictorClient;
  env: NodeJS.ProcessEnv;
}
