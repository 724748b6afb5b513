// Preloaded (`node --import`) into a measured child: on exit, writes the process's CPU time as JSON to file descriptor 3.
import { writeSync } from 'node:fs';
process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  writeSync(3, JSON.stringify({ cpuMs: (user + system) / 1000 }));
});
