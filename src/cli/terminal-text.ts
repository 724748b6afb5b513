/**
 * Text that reaches the terminal. Anything the server sent (error messages,
 * request ids) may hold ANSI escapes or control characters that would move the
 * cursor, recolour or retitle the user's terminal; the CLI passes every line it
 * prints through `cleanForTerminal` as a last defence.
 */

// CSI (ESC [ … final byte), OSC (ESC ] … BEL or ESC \), other two-byte ESC sequences, and the 8-bit CSI.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const ESCAPE_SEQUENCES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]|\u009b[0-?]*[ -/]*[@-~]/g;
// C0 controls except tab and newline, DEL, C1 controls, and bidi overrides that can reorder what is shown.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Removes escape sequences and control characters; keeps newlines and tabs. */
export function cleanForTerminal(text: string): string {
  return text.replace(ESCAPE_SEQUENCES, '').replace(CONTROL_CHARACTERS, '');
}
