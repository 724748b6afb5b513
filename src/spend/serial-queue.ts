/**
 * An in-process mutex: tasks passed to `run` execute one at a time, in call
 * order. A task that throws does not stop the ones after it.
 */
export function createSerialQueue(): <T>(task: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(task: () => Promise<T>): Promise<T> => {
    const result = tail.then(() => task());
    tail = result.catch(() => undefined);
    return result;
  };
}
