#!/usr/bin/env node
// Prints the lines of the storing code as issue 28 counts them (plain lines, comments and blank lines included):
// the quota store's file and Redis backends, the bots' state, job history, Slack installations and the Discord job
// stores. The money rules (src/spend's rulebook, caps, breaker, ledger document, Lua scripts …) are not counted; a
// module the backends share for storing (not a rule) is.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const files = [
  'src/spend/FileQuotaStore.ts',
  'src/spend/usage-days.ts',
  'src/spend/RedisQuotaStore.ts',
  'src/spend/store-process.ts',
  ...readdirSync(join(root, 'bots/state'))
    .filter((name) => name.endsWith('.ts'))
    .sort()
    .map((name) => `bots/state/${name}`),
  'bots/runner/job-history.ts',
  'bots/slack/installation-store.ts',
  'bots/discord/JobRecordStore.ts',
];
let total = 0;
for (const file of files) {
  const text = readFileSync(join(root, file), 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  total += lines;
  console.log(`${String(lines).padStart(6)}  ${file}`);
}
console.log(`${String(total).padStart(6)}  total (goal: at most 2,400)`);
