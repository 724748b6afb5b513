import { startChildServer } from './helpers/child-server.js';
import { makeContender, WORKLOADS } from './helpers/contenders.js';
import { PictorClient } from '../src/index.js';
import { DEV_API_KEY } from '../src/emulator/index.js';
import { collectGarbage } from './helpers/measure.js';
const emu = await startChildServer('./emulator-server.ts', ['{"latencyMs":0}']);
const noLimiter = { acquire: async () => () => {} } as never;
const variants: Record<string, (w: 'streamed'|'nonStreamed') => Promise<number>> = {
  pictor: (w) => makeContender('pictor', emu.url).run(w),
  undici: (w) => makeContender('undici', emu.url).run(w),
};
const pictor = makeContender('pictor', emu.url); variants.pictor = (w) => pictor.run(w);
const und = makeContender('undici', emu.url); variants.undici = (w) => und.run(w);
const nl = new PictorClient({ baseURL: emu.url, apiKey: DEV_API_KEY, limiter: noLimiter });
variants.pictorNoLimiter = async (w) => {
  if (w === 'nonStreamed') { const r = await nl.generate(WORKLOADS.nonStreamed); return r.data.length; }
  let c = 0; for await (const e of nl.generateStream(WORKLOADS.streamed)) c += e.b64_json.length; return c;
};
const res: Record<string, number[]> = {}; const wall: Record<string, number[]> = {};
const w = (process.argv[2] ?? 'streamed') as 'streamed';
for (let round = 0; round < 60; round++) {
  for (const [name, fn] of Object.entries(variants)) {
    collectGarbage();
    const cpu = process.cpuUsage(); const t = performance.now();
    for (let i = 0; i < 5; i++) await fn(w);
    const u = process.cpuUsage(cpu);
    if (round >= 5) { (res[name] ??= []).push((u.user + u.system) / 5000); (wall[name] ??= []).push((performance.now() - t) / 5); }
  }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
for (const k of Object.keys(res)) console.log(w, k.padEnd(16), 'cpu', med(res[k]!).toFixed(2), 'wall', med(wall[k]!).toFixed(2));
await emu.close();
