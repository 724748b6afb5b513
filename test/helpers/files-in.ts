import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Every file under `dir`, in its subfolders too, by its path in `dir`, sorted. */
export async function filesIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name))).sort();
}
