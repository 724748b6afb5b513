/** A stored text's JSON, or undefined when there is none or it is not JSON (a torn line, a damaged copy). */
export function safeJson<T = unknown>(text: string | null | undefined): T | undefined {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
