#!/usr/bin/env node
/**
 * The installed `pictor` command. The build bundles it with everything it
 * imports into dist/cli/ (scripts/build-cli.mjs): a one-off command then reads
 * a few files instead of hundreds, and each command, the emulator and the
 * optional packages stay separate chunks loaded only when used.
 */
import * as nodeModule from 'node:module';
import { setFlagsFromString } from 'node:v8';

// Node.js 22.1+ keeps compiled code on disk between runs; older versions lack the function.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// undici parses HTTP with llhttp compiled to WebAssembly. V8 compiles it at once
// with its baseline compiler, then optimizes hot functions on a worker thread,
// and a process does not exit before that work is done: ~80 ms at the end of
// every one-off command (bench/RESULTS.md, "CLI start-up"), for code it will not
// run again. The baseline code parses a response as fast as this command needs;
// set before undici is loaded, so every module it compiles sees the flag.
setFlagsFromString('--liftoff-only');

const { runCli } = await import('./main.js');
process.exitCode = await runCli();
