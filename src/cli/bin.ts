#!/usr/bin/env node
/**
 * The installed `pictor` command. The build bundles it with everything it
 * imports into dist/cli/ (scripts/build-cli.mjs): a one-off command then reads
 * a few files instead of hundreds, and each command, the emulator and the
 * optional packages stay separate chunks loaded only when used.
 */
import * as nodeModule from 'node:module';

// Node.js 22.1+ keeps compiled code on disk between runs; older versions lack the function.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const { runCli } = await import('./main.js');
process.exitCode = await runCli();
