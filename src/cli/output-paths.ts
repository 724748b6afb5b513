import { randomBytes } from 'node:crypto';
import { lstat, mkdir, mkdtemp, open, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { writeFileAtomically } from '../core/atomic-file.js';
import { describeFileError } from '../core/system-errors.js';
import { ValidationError } from '../core/errors.js';
import { FILE_EXTENSIONS, LIMITS, type OutputFormat } from '../spec/constants.js';

/**
 * Where a job's images go, decided and checked before anything is sent, so a
 * paid image never meets an unwritable path.
 *
 * `--out PATH`: a directory (existing, or written with a trailing slash) gets
 * files named after the job: the prompt's first words, a time stamp and a
 * random suffix, so parallel runs never share a name. Anything else is a file
 * name; several images or partials become numbered siblings (`cat.png`,
 * `cat-2.png`, `cat.partial-1.png`, numbered from 1 as the progress line counts them). A file name's extension must match the
 * format (`.jpg`/`.jpeg` for jpeg); a name without one gets the format's.
 * An existing file is never replaced unless `overwrite` is set.
 */
export interface OutputPlan {
  /**
   * Where image `index` goes, named for `format` (its real format, told by its bytes when it is written; the one asked
   * for by default): a name Pictor makes gets that format's extension, a file name the user gave keeps theirs.
   */
  finalPath(index: number, format?: OutputFormat): string;
  partialPath(imageIndex: number, partialIndex: number, format?: OutputFormat): string;
  /** The format the file name the user gave says (`--out fox.png`: png), kept whatever the image is; undefined when Pictor names the files. */
  named: OutputFormat | undefined;
}

export interface OutputRequest {
  /** `--out` as given; undefined means `./out/` (created when missing), so images never land loose in a repository's root. */
  out: string | undefined;
  /** Where relative paths start: the directory the user ran the command from. */
  cwd: string;
  jobName: string;
  format: OutputFormat;
  /** Images the job makes. */
  count: number;
  /** Whether partial images will be written (streaming). */
  partials: boolean;
  overwrite: boolean;
}

const IMAGE_EXTENSIONS: Record<string, OutputFormat> = { png: 'png', jpg: 'jpeg', jpeg: 'jpeg', webp: 'webp' };

/** Where images go without `--out`: a folder `out` in the current directory. */
export const DEFAULT_OUT = 'out/';

/** Decides the paths and proves they can be written; a ValidationError naming `--out` otherwise. */
export async function planOutput(request: OutputRequest): Promise<OutputPlan> {
  const { format, count } = request;
  const target = resolve(request.cwd, request.out ?? DEFAULT_OUT);
  const isDir = request.out === undefined || /[/\\]$/.test(request.out) || (await stat(target).then((s) => s.isDirectory(), () => false));
  const ext = FILE_EXTENSIONS[format];
  const extOf = (real: OutputFormat | undefined) => FILE_EXTENSIONS[real ?? format];
  let plan: OutputPlan;
  if (isDir) {
    const name = (i: number) => `${request.jobName}${count > 1 ? `-${i + 1}` : ''}`;
    plan = {
      finalPath: (i, real) => join(target, `${name(i)}.${extOf(real)}`),
      partialPath: (i, p, real) => join(target, `${name(i)}.partial-${p + 1}.${extOf(real)}`),
      named: undefined,
    };
  } else {
    const given = extname(target);
    const givenFormat = IMAGE_EXTENSIONS[given.slice(1).toLowerCase()];
    if (givenFormat && givenFormat !== format) {
      throw new ValidationError(
        'out',
        `--out: ${target} ends in ${given} but the images will be ${format}: name the file .${ext}, or choose the format with --format ${givenFormat}`,
      );
    }
    const stem = givenFormat ? target.slice(0, -given.length) : target;
    // The user's extension is theirs to keep; one Pictor adds follows the image's real format.
    const fileExt = (real: OutputFormat | undefined) => (givenFormat ? given.slice(1) : extOf(real));
    plan = {
      finalPath: (i, real) => `${stem}${i > 0 ? `-${i + 1}` : ''}.${fileExt(real)}`,
      partialPath: (i, p, real) => `${stem}${i > 0 ? `-${i + 1}` : ''}.partial-${p + 1}.${fileExt(real)}`,
      named: givenFormat,
    };
  }

  const directory = isDir ? target : dirname(target);
  await makeDirectory(directory).catch((error: NodeJS.ErrnoException) => {
    throw new ValidationError('out', `--out: cannot create the directory ${directory} (${error.code === 'EEXIST' || error.code === 'ENOTDIR' ? 'a file is in the way' : reason(error)})`);
  });
  const isDirectory = await stat(directory).then((s) => s.isDirectory(), () => false);
  if (!isDirectory) throw new ValidationError('out', `--out: ${directory} is not a directory`);
  await probeWritable(directory);

  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    paths.push(plan.finalPath(i));
    if (request.partials) for (let p = 0; p < LIMITS.partialImagesMax; p++) paths.push(plan.partialPath(i, p));
  }
  for (const path of paths) await checkTarget(path, request.overwrite);
  return plan;
}

/**
 * `mkdir -p`, one level at a time. Node's `mkdir(…, { recursive: true })`
 * never returns for a path under /proc (it keeps retrying the parent, which
 * exists but refuses children), so it is not used on paths the user gives.
 */
async function makeDirectory(directory: string): Promise<void> {
  const missing: string[] = [];
  let current = directory;
  while (!(await lstat(current).then(() => true, () => false))) {
    missing.unshift(current);
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  for (const path of missing) {
    await mkdir(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
}

/** Opens (and removes) a fresh file beside the target: the surest test that the directory takes files. */
async function probeWritable(directory: string): Promise<void> {
  const probe = join(directory, `.pictor-write-check-${randomBytes(4).toString('hex')}`);
  try {
    const handle = await open(probe, 'wx');
    await handle.close();
    await unlink(probe).catch(() => undefined);
  } catch (error) {
    throw new ValidationError('out', `--out: cannot write files in ${directory} (${reason(error as NodeJS.ErrnoException)})`);
  }
}

async function checkTarget(path: string, overwrite: boolean): Promise<void> {
  const link = await lstat(path).catch(() => undefined);
  if (!link) return;
  const info = await stat(path).catch(() => undefined);
  if (!info) throw new ValidationError('out', `--out: ${path} is a link to a path that does not exist`);
  if (info.isDirectory()) throw new ValidationError('out', `--out: ${path} is a directory`);
  if (!overwrite) throw new ValidationError('out', `--out: ${path} already exists; pass --overwrite to replace it, or choose another name`);
  const handle = await open(path, 'r+').catch((error: NodeJS.ErrnoException) => {
    throw new ValidationError('out', `--out: cannot replace ${path} (${reason(error)})`);
  });
  await handle.close();
}

/** Writes one image; never replaces an existing file unless `overwrite`. */
export async function writeOutput(path: string, bytes: Uint8Array, overwrite: boolean): Promise<void> {
  await makeDirectory(dirname(path));
  await writeWhole(path, bytes, overwrite);
}

/**
 * Writes the bytes to a temporary sibling, syncs them, and only then gives them the file's name, so the name never
 * holds a cut-off image, whenever the process stops (a leftover sibling says by its `.tmp` name that it is not a whole
 * image). Without `overwrite` the name is taken only if nothing has it (EEXIST otherwise), as `wx` does. The file's
 * permissions are those of any new file (0666 less the umask).
 */
async function writeWhole(path: string, bytes: Uint8Array, overwrite: boolean): Promise<void> {
  await writeFileAtomically(path, bytes, { mode: 0o666, ...(overwrite ? {} : { exclusive: true }) });
}

/**
 * Saves images that could not be written where asked into a folder of the OS temp directory: `directory` when given
 * (the folder an earlier image of the job went to), else a new one; returns their paths. All or none: when one cannot
 * be written (the temp directory full or read-only), what this call wrote is removed, with the folder when this call
 * made it, and the error is thrown, so a failed save leaves no empty `pictor-…` folder behind.
 */
export async function saveToFallback(images: readonly { wanted: string; bytes: Uint8Array }[], directory?: string): Promise<string[]> {
  const folder = directory ?? (await mkdtemp(join(tmpdir(), 'pictor-')));
  const saved: string[] = [];
  try {
    for (const { wanted, bytes } of images) {
      const path = join(folder, basename(wanted));
      await writeWhole(path, bytes, false);
      saved.push(path);
    }
  } catch (error) {
    if (directory === undefined) await rm(folder, { recursive: true, force: true }).catch(() => undefined);
    else for (const path of saved) await rm(path, { force: true }).catch(() => undefined);
    throw error;
  }
  return saved;
}

function reason(error: NodeJS.ErrnoException): string {
  return describeFileError(error);
}

/** A short, unique name for a job's files: prompt words, a time stamp and a random suffix. */
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
  return `${words || 'image'}-${stamp}-${randomBytes(3).toString('hex')}`;
}
