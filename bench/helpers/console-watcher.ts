/**
 * A browser's worth of load on a console, from a process of its own (its CPU is not the bot's): logs in, keeps the
 * jobs page's live updates open (Server-Sent Events), loads the spend page every 2 s and the jobs page every 5 s, until
 * SIGTERM; then prints what it did as one line of JSON.
 *
 *   node --import tsx bench/helpers/console-watcher.ts <console url> <token>
 */
const [url, token] = process.argv.slice(2) as [string, string];
const login = await fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams({ token }), redirect: 'manual', headers: { origin: url } });
const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
const counts = { spendPages: 0, jobsPages: 0, liveEvents: 0 };
const stop = new AbortController();

void (async () => {
  try {
    const res = await fetch(`${url}/events/jobs`, { headers: { cookie }, signal: stop.signal });
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) counts.liveEvents += (decoder.decode(chunk as Uint8Array, { stream: true }).match(/^event: /gm) ?? []).length;
  } catch {
    // Stopped.
  }
})();
const load = (path: string, key: 'spendPages' | 'jobsPages') => () =>
  void fetch(`${url}${path}`, { headers: { cookie }, signal: stop.signal })
    .then((res) => res.text())
    .then(() => counts[key]++, () => undefined);
const timers = [setInterval(load('/spend', 'spendPages'), 2000), setInterval(load('/jobs', 'jobsPages'), 5000)];
process.on('SIGTERM', () => {
  for (const timer of timers) clearInterval(timer);
  stop.abort();
  process.stdout.write(`${JSON.stringify(counts)}\n`);
  process.exit(0);
});
