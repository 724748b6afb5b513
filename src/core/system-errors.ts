import { getSystemErrorMap } from 'node:util';

/**
 * Operating-system and network error codes (`ENOENT`, `ENOTFOUND`, …) in words, for messages people read: "no such
 * file or directory" rather than "(ENOENT)".
 */

/** Failures to look a host name up: libuv's table does not hold these (they come from getaddrinfo). */
const LOOKUP_WORDS: Record<string, string> = {
  ENOTFOUND: 'its name could not be found (no network, or a wrong host name)',
  EAI_AGAIN: 'its name could not be looked up (DNS did not answer: no network?)',
  EAI_FAIL: 'its name could not be looked up (DNS failed)',
  EAI_NONAME: 'its name could not be found (no network, or a wrong host name)',
};

/**
 * A system error's code (`ENOENT`, `EAI_AGAIN`, Node's `ERR_…`), or undici's (fetch's: `UND_ERR_CONNECT_TIMEOUT`,
 * `UND_ERR_SOCKET`).
 */
const SYSTEM_CODE = /^(E[A-Z0-9_]+|UND_ERR_[A-Z0-9_]+)$/;

/**
 * A system error found in an error's chain: its `code`, the step Node names as failed (`syscall`: `connect`,
 * `getaddrinfo`, …) when it names one, and, for a failure of several attempts (Node's `AggregateError` when each address
 * of a name failed, `autoSelectFamily`), each attempt's own.
 */
export interface SystemFailure {
  code: string;
  syscall?: string | undefined;
  /** Each attempt's failure, in order; undefined for an attempt that carried no system error. */
  attempts?: (SystemFailure | undefined)[] | undefined;
}

/**
 * The first system error (`code` like `ENOENT`, `EAI_AGAIN` or `UND_ERR_SOCKET`) on the error or the errors it wraps:
 * undici and discord.js keep it in `cause`, Slack's WebClient in `original` (whose own `cause` is Node's error). A
 * wrapper that only copies its cause's code (the HTTP library under Slack's WebClient does) is passed for the cause,
 * which names the failed step. An `AggregateError` (Node's, with its first attempt's code, or a bare one) gives its
 * attempts.
 */
export function systemFailure(error: unknown): SystemFailure | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const { code, syscall, errors } = current as { code?: unknown; syscall?: unknown; errors?: unknown };
    const next = (current as { cause?: unknown }).cause ?? (current as { original?: unknown }).original;
    const ownCode = typeof code === 'string' && SYSTEM_CODE.test(code) ? code : undefined;
    // Every attempt is kept, one with no system error too (undefined): a reader asking how each attempt failed must not take an unknown one for a known step.
    const attempts = Array.isArray(errors) ? errors.map(systemFailure) : [];
    const known = attempts.find((attempt) => attempt !== undefined);
    if (known) return { code: ownCode ?? known.code, syscall: typeof syscall === 'string' ? syscall : undefined, attempts };
    if (ownCode && (next as { code?: unknown } | undefined)?.code !== ownCode) return { code: ownCode, syscall: typeof syscall === 'string' ? syscall : undefined };
    current = next;
  }
  return undefined;
}

/** The first `code` like `ENOENT`, `EAI_AGAIN` or `UND_ERR_SOCKET` on the error or the errors it wraps. */
export function systemErrorCode(error: unknown): string | undefined {
  return systemFailure(error)?.code;
}

/** True when the code means the other side could not be reached at all (name lookup, refused, unreachable, timed out). */
export function isUnreachableCode(code: string | undefined): boolean {
  return code !== undefined && (code in LOOKUP_WORDS || ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'ETIMEDOUT', 'ECONNRESET'].includes(code));
}

let byName: Map<string, string> | undefined;

/** The code in words ("no such file or directory"), or undefined for a code Node does not know. */
export function describeSystemError(code: string): string | undefined {
  if (code in LOOKUP_WORDS) return LOOKUP_WORDS[code];
  byName ??= new Map([...getSystemErrorMap().values()].map(([name, message]): [string, string] => [name, message]));
  return byName.get(code);
}

/** Why a file operation failed, in words: "no such file or directory", else the code, else the message. */
export function describeFileError(error: unknown): string {
  const code = systemErrorCode(error);
  if (code) return describeSystemError(code) ?? code;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Why a service could not be reached, in words, naming it: "could not reach discord.com: its name could not be found
 * (no network, or a wrong host name)". Undefined when the error is not about reaching it.
 */
export function describeUnreachable(error: unknown, host: string): string | undefined {
  const code = systemErrorCode(error);
  if (!isUnreachableCode(code)) return undefined;
  return `could not reach ${host}: ${describeSystemError(code!) ?? code}`;
}
