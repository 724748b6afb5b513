/** The runner's one rule for an error in a log line (`loggableError`), which keeps Discord's interaction tokens out. */
export { loggableError } from '../runner/index.js';
