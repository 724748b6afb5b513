import { DiscordHarness } from './harness.js';
const h = await DiscordHarness.start({ emulator: { latencyMs: 600 } });
const ix = h.discord.slashCommand('imagine', { prompt: 'a lighthouse at dusk', quality: 'low' });
await new Promise((r) => setTimeout(r, 4000));
console.log(JSON.stringify(h.discord.original(ix)?.history.map(s => [s.via, s.content, s.attachments.map(a=>a.filename), JSON.stringify(s.components)]), null, 1));
console.log(h.logger.text().slice(0, 5000));
console.log(h.discord.requests.map((r) => `${r.method} ${r.route} ${r.status} ${r.code}`));
console.log(h.emulator.requests.map((r) => `${r.path} ${r.status}`));
await h.close();
