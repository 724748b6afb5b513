import { createImageLimiter } from '../src/core/shared-limiter.js';
const redis = { url: 'redis://127.0.0.1:6390', prefix: `smoke-${Date.now()}` };
const a = await createImageLimiter({ imagesPerMinute: 6, maxConcurrent: 2, redis });
const b = await createImageLimiter({ imagesPerMinute: 6, maxConcurrent: 2, redis });
let running = 0, peak = 0;
const t0 = Date.now();
const jobs = [];
for (let i = 0; i < 8; i++) {
  const l = i % 2 ? a : b;
  jobs.push(l.schedule({ weight: 1, onQueuePosition: (ahead) => console.log(`job ${i} ahead ${ahead}`) }, async () => {
    running++; peak = Math.max(peak, running);
    console.log(`job ${i} start at ${Date.now() - t0} running ${running}`);
    await new Promise((r) => setTimeout(r, 300));
    running--;
    return i;
  }));
}
console.log(await Promise.all(jobs), 'peak', peak, 'ms', Date.now() - t0);
console.log(await a.stats());
await Promise.all([a.stop(), b.stop()]);
console.log('stopped');
