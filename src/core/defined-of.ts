/** The object without its undefined properties (a value left unset does not hide a default spread before it). */
export function definedOf<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
