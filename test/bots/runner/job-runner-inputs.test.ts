import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import type { JobUpdate, Requester } from '../../../bots/runner/index.js';
import { makeImage } from '../../helpers/images.js';
import { requester, useRunnerKit, waitUntil } from '../../helpers/runner-harness.js';

const kit = useRunnerKit();

/** A full garbage collection (the flag is set at run time, so no node option is needed). */
const collectGarbage: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/** Submits an edit of one fresh image and returns only a weak reference to that image, so nothing of the test's holds it. */
async function submitEdit(runner: Awaited<ReturnType<typeof kit.runner>>['runner'], who: Requester, sink: (update: JobUpdate) => Promise<void>) {
  const data = Buffer.from(await makeImage('png', 48, 48));
  const handle = await runner.submit({ kind: 'edit', prompt: 'make it blue', options: { quality: 'low' }, images: [{ data, filename: 'a.png' }], requester: who }, sink);
  return { handle, image: new WeakRef(data) };
}

describe('JobRunner and an edit’s input images', () => {
  it('lets go of them once the edit has finished, while its final update is still being shown', async () => {
    const { runner } = await kit.runner({ partialImages: 0 });
    let showFinal!: () => void;
    const finalShown = new Promise<void>((resolve) => (showFinal = resolve));
    let finalArrived = false;
    // A surface still uploading the result: the final update is not done with yet.
    const sink = async (update: JobUpdate) => {
      if (update.type !== 'completed') return;
      finalArrived = true;
      await finalShown;
    };

    const { handle, image } = await submitEdit(runner, requester(), sink);
    await waitUntil(() => finalArrived, 'the final update reaches the surface');
    expect(runner.get(handle.id)?.status).toBe('completed');
    // Collected as soon as nothing holds it. Each try collects on a new turn before it looks: a `deref` keeps its target until the turn ends.
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      collectGarbage();
      if (image.deref() === undefined) break;
    }

    expect(image.deref()).toBeUndefined();
    showFinal();
    expect((await handle.done).type).toBe('completed');
  });
});
