import { mkdir, stat, writeFile } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { FILE_EXTENSIONS, type OutputFormat } from '../spec/constants.js';

/**
 * `--out PATH`: a directory (existing, or written with a trailing slash) gets
 * files named after the job; anything else is a file name, and several images
 * or partials become numbered siblings (`cat.png`, `cat-2.png`, `cat.partial-0.png`).
 */
export interface OutputPlan {
  finalPath(index: number, count: number, format: OutputFormat): string;
  partialPath(imageIndex: number, partialIndex: number, count: number, format: OutputFormat): string;
}

export async function planOutput(out: string | undefined, jobName: string): Promise<OutputPlan> {
  const target = resolve(out ?? '.');
  const isDir = out === undefined || /[/\\]$/.test(out) || (await stat(target).then((s) => s.isDirectory(), () => false));
  if (isDir) {
    return {
      finalPath: (i, count, format) => join(target, `${jobName}${count > 1 ? `-${i + 1}` : ''}.${FILE_EXTENSIONS[format]}`),
      partialPath: (i, p, count, format) => join(target, `${jobName}${count > 1 ? `-${i + 1}` : ''}.partial-${p}.${FILE_EXTENSIONS[format]}`),
    };
  }
  const ext = extname(target);
  const stem = ext ? target.slice(0, -ext.length) : target;
  const extOf = (format: OutputFormat) => (ext ? ext.slice(1) : FILE_EXTENSIONS[format]);
  return {
    finalPath: (i, _count, format) => `${stem}${i > 0 ? `-${i + 1}` : ''}.${extOf(format)}`,
    partialPath: (i, p, _count, format) => `${stem}${i > 0 ? `-${i + 1}` : ''}.partial-${p}.${extOf(format)}`,
  };
}

export async function writeOutput(path: string, bytes: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
}

/** A short name for a job's files: prompt words and a time stamp. */
export function jobNameOf(prompt: string, now = new Date()): string {
  const words = prompt
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9\s-]/g, '')
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 5)
    .join('-')
    .slice(0, 40);
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${words || 'image'}-${stamp}`;
}
