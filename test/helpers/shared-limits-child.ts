/**
 * One Pictor process of the shared-limits tests and bench, run with
 * `node --import tsx` by `startChild` (shared-limits-fleet.ts). It makes its
 * limiter with `createImageLimiter` (shared through Redis), points a real
 * PictorClient at the emulator, and runs the jobs its parent sends over IPC,
 * reporting each step back.
 */
import { PictorClient } from '../../src/client/PictorClient.js';
import type { ImageLimiter } from '../../src/core/image-limiter.js';
import { createImageLimiter } from '../../src/core/shared-limiter.js';
import type { ChildConfig, ChildEvent, ParentCommand } from './shared-limits-fleet.js';

const config = JSON.parse(process.argv[2] ?? '{}') as ChildConfig;
const send = (event: ChildEvent) => process.send?.(event);
const running = new Set<AbortController>();

let limiter: ImageLimiter;
try {
  limiter = await createImageLimiter({
    imagesPerMinute: config.imagesPerMinute,
    maxConcurrent: config.maxConcurrent,
    redis: { url: config.redisUrl, prefix: config.prefix },
    leaseMs: config.leaseMs,
    heartbeatMs: config.heartbeatMs,
    toleranceMs: config.toleranceMs,
  });
} catch (error) {
  send({ type: 'fatal', code: (error as { code?: string }).code ?? 'unknown', message: (error as Error).message });
  process.exit(1);
}
const client = new PictorClient({ baseURL: config.baseURL, apiKey: config.apiKey, limiter, maxRetries: config.maxRetries ?? 4 });

async function runJob(id: string, n: number): Promise<void> {
  const controller = new AbortController();
  running.add(controller);
  try {
    const result = await client.generate(
      { prompt: config.prompt ?? 'a lighthouse at dusk', n, size: '1024x1024', quality: 'low' },
      {
        signal: controller.signal,
        onQueuePosition: (ahead) => send({ type: 'queued', id, ahead }),
        onStart: () => send({ type: 'started', id, at: Date.now() }),
        onRetry: ({ error }) => send({ type: 'retry', id, code: error.code }),
      },
    );
    send({ type: 'done', id, images: result.data.length, at: Date.now() });
  } catch (error) {
    send({ type: 'failed', id, code: (error as { code?: string }).code ?? 'unknown', message: (error as Error).message });
  } finally {
    running.delete(controller);
  }
}

process.on('message', (message: ParentCommand) => {
  if (message.type === 'run') {
    for (const job of message.jobs) void runJob(job.id, job.n);
  } else if (message.type === 'stop') {
    for (const controller of running) controller.abort();
    void limiter.stop().finally(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready', pid: process.pid });
