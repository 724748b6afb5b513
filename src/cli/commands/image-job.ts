import { dirname, resolve } from 'node:path';
import { imagesOfFailure, resultFromCompleted, type ImageJobResult } from '../../client/job-result.js';
import { imageBytes } from '../../client/image-bytes.js';
import { imageFormatOf, type LabelledImage } from '../../client/check-result.js';
import { imageOfPartial } from '../../client/partial-bound.js';
import { OUTPUT_NOT_WRITTEN_CODE, ValidationError } from '../../core/errors.js';
import { BudgetExceededError } from '../../spend/errors.js';
import { describeFileError } from '../../core/system-errors.js';
import { describeDuration, describeElapsed } from '../../core/describe-duration.js';
import { untilSignalled } from '../../core/with-timeout.js';
import { describeQuote, estimatePrice } from '../../core/pricing.js';
import { LIMITS, type OutputFormat } from '../../spec/constants.js';
import { parseEditRequest, parseGenerationRequest } from '../../spec/validate.js';
import { FORMAT_NAMES } from '../../spec/image-type.js';
import { isPartialEvent, type CompletedEvent } from '../../spec/result-schemas.js';
import { EDIT_FLAGS, IMAGE_FLAGS, parseFlags, requestFieldsFromFlags, withFlagName } from '../flags.js';
import { readImageFile } from '../input-files.js';
import { jobNameOf, planOutput, saveToFallback, writeOutput } from '../output-paths.js';
import { sayInterruption, startProgress } from '../progress.js';
import { jobJson, JobWatch, wasSent } from '../interrupt.js';
import { JobFailure } from '../job-failure.js';
import type { CliContext } from '../context.js';
import type { Connection } from '../../connect.js';
import type { SpendWatch } from '../../spend/spend-guard.js';


/**
 * `pictor generate …` and `pictor edit …`: validate the request and check that
 * the output can be written (both before anything is sent), send it (streamed
 * or not) with progress on stderr, write the files, print where and the cost.
 * Images paid for that cannot be written where asked are saved in the OS temp
 * directory instead, and the command says where and exits 1.
 */
export async function runImageJob(operation: 'generate' | 'edit', args: string[], ctx: CliContext): Promise<number> {
  const values = parseFlags(args, operation === 'edit' ? EDIT_FLAGS : IMAGE_FLAGS, operation);
  if (values.help) {
    ctx.stdout(operation === 'edit' ? EDIT_USAGE : GENERATE_USAGE);
    return 0;
  }
  if (values['partial-images'] !== undefined && !values.stream) {
    throw new ValidationError('partial_images', '--partial-images needs --stream (partial images only come in a stream)');
  }
  const cwd = ctx.cwd ?? process.cwd();
  const fields = requestFieldsFromFlags(values);
  let input: Record<string, unknown> = fields;
  if (operation === 'edit') {
    const files = (values as { image?: string[] }).image ?? [];
    if (files.length === 0) throw new ValidationError('image', '--image is required: give at least one PNG, JPEG or WebP file');
    if (files.length > LIMITS.editImagesMax) throw new ValidationError('image', `--image: at most ${LIMITS.editImagesMax} images, not ${files.length}`);
    const image = [];
    for (const file of files) image.push(await readImageFile(resolve(cwd, file)));
    input = { ...fields, image };
  }

  // Validate before connecting: bad input never reaches the service.
  let request;
  try {
    request = operation === 'edit' ? parseEditRequest(input) : parseGenerationRequest(input);
  } catch (error) {
    throw error instanceof ValidationError ? withFlagName(error) : error;
  }
  const estimate = estimatePrice({ operation, size: request.size, quality: request.quality, n: request.n });
  const asked: OutputFormat = request.output_format;
  const overwrite = values.overwrite === true;
  const plan = await planOutput({
    out: values.out,
    cwd,
    jobName: jobNameOf(request.prompt),
    format: request.output_format,
    count: request.n,
    partials: values.stream === true,
    overwrite,
  });

  // This run's Ctrl+C: what it says knows what the ledger charged the job, and every file written. Answered from before
  // connecting (a Redis or a base URL that does not answer, an emulator starting): stopped there, nothing was sent.
  const job = new JobWatch();
  job.listen(sayInterruption({ terminal: ctx.terminal, line: ctx.stderr }));
  // Named before each is written: Ctrl+C tells partial images from final ones, even in the middle of a write.
  const partialPaths = new Set<string>();
  // --json prints one line: the result, or (a Ctrl+C that exits first) the interruption's.
  let answered = false;
  const answer = (line: string) => {
    if (answered) return;
    answered = true;
    ctx.stdout(line);
  };
  const about = { operation, isPartial: (path: string) => partialPaths.has(path) };
  // Until connected, only the embedded emulator (no PICTOR_BASE_URL) is known to be one.
  job.noteJob({ ...about, emulator: !ctx.env.PICTOR_BASE_URL, json: values.json ? answer : undefined });
  // The ledger's settle of the job begins once its images are in place and goes on without them (a busy ledger never
  // holds the images back); what the command says about the charge waits for it, once the images are written. The spend guard's watch of the
  // job says it; a job the ledger never reserved (refused, or stopped while it was being reserved) has no watch, and no
  // settle is coming: nothing to wait for.
  let spendWatch: SpendWatch | undefined;
  let ledgerAnswered: Promise<void> | undefined;
  /** Asked once the request is over (the client has ended the watch by then); noted for Ctrl+C's report as soon as it comes. */
  const ledgerAnswer = (): Promise<void> =>
    (ledgerAnswered ??= Promise.resolve(spendWatch?.settled).then((settlement) => settlement && job.noteSettled(settlement)));
  // The job's settle waits until its images are in place (or the run ends): nothing is paid for that cannot be kept, and
  // a process killed in between leaves the images, the job charged by a later run's reconcile.
  let imagesSaved = (): void => undefined;
  const saved = new Promise<void>((resolve) => (imagesSaved = resolve));
  const onJob = (watch: SpendWatch) => {
    spendWatch = watch;
    watch.settleAfter(saved);
  };
  // The first Ctrl+C gives connecting up at once (a Redis or a base URL that does not answer): nothing was sent.
  const connecting = ctx.connect({ onJob, signal: job.signal });
  let connection: Connection;
  try {
    connection = await untilSignalled(connecting, job.signal);
  } catch (error) {
    if (!job.signal.aborted) {
      job.close();
      throw error;
    }
    // Stopped while connecting: nothing was sent. A connection that opened after all is closed; the exit timer the
    // signal armed stays until then, in case closing it hangs.
    void connecting
      .then((late) => late.close())
      .catch(() => undefined)
      .finally(() => job.close());
    return job.interruptedExit();
  }
  // From here on every way out closes the connection (its limiter, its ledger, an embedded emulator) and stops answering Ctrl+C.
  let stopProgress = (): void => undefined;
  try {
    const progress = await startProgress({ terminal: ctx.terminal, line: ctx.stderr, images: request.n, everyMs: ctx.progressEveryMs ?? 5000, job });
    stopProgress = () => progress.stop();
    const emulator = connection.ledger === 'emulator';
    if (connection.emulatorUrl) ctx.stderr(`No PICTOR_BASE_URL set: using an embedded emulator at ${connection.emulatorUrl} (no money is spent).`);
    else if (emulator) ctx.stderr(`PICTOR_BASE_URL is a Pictor emulator (no money is spent; its jobs go to the emulator's ledger, pictor usage --emulator).`);
    const started = Date.now();
    const partialFiles: string[] = [];
    // What Ctrl+C says (and, with --json, prints on stdout) knows where the job went.
    job.noteJob({ ...about, emulator, json: values.json ? answer : undefined });
    let result: ImageJobResult;
    const completed: CompletedEvent[] = [];
    // The final images written so far (or saved to the temp directory): each as soon as it arrives, so an exit at any moment keeps what was paid.
    const kept: Kept = { files: [], saved: [], unwritten: [], lost: [], formats: new Map() };
    /** The folder of the OS temp directory this job's images that could not go where asked are saved to, once there is one. */
    let fallbackFolder: string | undefined;
    try {
      const requestOptions = {
        // The first Ctrl+C cancels the request: the spend guard releases it (still waiting) or settles it (sent).
        signal: job.signal,
        onQueuePosition: (ahead: number) => {
          progress.queued(ahead);
          if (ahead > 0) ctx.stderr(`queued, ${ahead} ahead`);
        },
        onStart: () => progress.starting(),
        // Sent only once the ledger has recorded it (a Ctrl+C before then sends nothing and says so).
        onSend: () => progress.sending(),
        onRetry: ({ attempt, delayMs, error }: { attempt: number; delayMs: number; error: { code: string } }) => {
          const line = `retry ${attempt} in ${describeDuration(delayMs)} (${error.code})`;
          progress.retrying(line);
          ctx.stderr(line);
        },
      };
      if (values.stream) {
        const stream =
          operation === 'edit'
            ? ctx.client(connection).editStream(input as never, requestOptions)
            : ctx.client(connection).generateStream(input as never, requestOptions);
        const wanted = request.partial_images;
        for await (const event of stream) {
          if (isPartialEvent(event)) {
            progress.partialReceived();
            // The image the stream says it belongs to (as its bound counted it), else the one being drawn.
            const image = imageOfPartial(event, completed.length);
            const bytes = imageBytes(event);
            // Named for what it is (a preview in another format than asked for gets its own extension; previews are not
            // checked by the client, so their bytes tell it).
            const path = plan.partialPath(image, event.partial_image_index, imageFormatOf(bytes) ?? undefined);
            partialPaths.add(path);
            const label = `partial ${event.partial_image_index + 1}${wanted !== undefined ? `/${wanted}` : ''} of image ${image + 1}/${request.n}`;
            try {
              // A partial that cannot be written is only a preview: say so and keep the stream (and the final image).
              await write(path, bytes);
              partialFiles.push(path);
              ctx.stderr(`${label} → ${path}`);
            } catch (error) {
              ctx.stderr(`${label}: could not write ${path} (${errorCode(error)}); going on`);
            }
          } else {
            completed.push(event);
            progress.imageDone();
            await writeImages([event], completed.length - 1);
            ctx.stderr(`image ${completed.length}/${request.n} done`);
          }
        }
        result = resultFromCompleted(completed, { operation, size: request.size, quality: request.quality }, stream.requestId);
      } else {
        result =
          operation === 'edit'
            ? await ctx.client(connection).edit(input as never, requestOptions)
            : await ctx.client(connection).generate(input as never, requestOptions);
      }
      // The request is over: a Ctrl+C from here on lets the images be written.
      job.jobEnded();
      void ledgerAnswer();
    } catch (error) {
      // Refused before it was sent (a cap, invalid input, a ledger that cannot be used or did not record the mark): nothing was sent,
      // so nothing can have been charged.
      const sent = wasSent(job.phase);
      // The images that arrived before the failure were made (and are charged): they are written (a stream's already are), and the job still fails.
      job.jobEnded();
      void ledgerAnswer();
      progress.stop();
      if (emulator && error instanceof BudgetExceededError) {
        error.message += " This is the emulator's own ledger, where the account's caps are rehearsed: nothing was spent, and the account's ledger is untouched.";
      }
      const arrived = values.stream ? completed : imagesOfFailure(error);
      if (!values.stream && arrived.length > 0) await writeImages(arrived, 0);
      await imagesInPlace();
      if (job.signal.aborted) {
        // Ctrl+C: the request is over and the images that came are written; the ledger's settle or release is waited for,
        // then the interruption is told (with --json, also as the one line on stdout). The watch's exit timer, armed
        // again by imagesWritten, bounds that wait as the first Ctrl+C promised: a ledger that does not answer in time
        // leaves the job's end to its settle if that still lands, else to a later run's reconcile, as the report says.
        // A job stopped before the ledger reserved it has no settle coming: the exit is at once.
        await ledgerAnswer();
        return job.interruptedExit();
      }
      if (arrived.length > 0) {
        const written = [...kept.files, ...kept.saved];
        const lead = `pictor: the job failed after ${arrived.length} of ${request.n} image${request.n === 1 ? '' : 's'}`;
        if (written.length === 0) {
          ctx.stderr(`${lead}; ${arrived.length === 1 ? 'the one that arrived' : `the ${arrived.length} that arrived`} could not be written (see the lost images above).`);
        } else {
          const which = written.length === arrived.length ? `the ${arrived.length === 1 ? 'one' : arrived.length} that arrived` : `${written.length} of the ${arrived.length} that arrived (the others are lost, see above)`;
          ctx.stderr(`${lead}; wrote ${which}:`);
          for (const f of written) ctx.stderr(`  ${f}`);
        }
      }
      // A job never sent fails as any refusal before sending does: its --json line has no `charged` (nor files), which
      // would read as a charge the ledger had not answered.
      if (!sent) throw error;
      // Sent: the spend guard has the job, and its settle ends (lands, or is kept for later) within the ledger's retry time.
      await ledgerAnswer();
      // With --json the failure's line names them too, and what the ledger charged: a script learns of every image it paid for.
      throw new JobFailure(error, { ...jobJson(job, about), ...(kept.lost.length ? { lost: kept.lost.map((item) => item.wanted) } : {}) });
    }
    progress.stop();
    // A stream's images are written already, as they came.
    if (!values.stream) await writeImages(result.data, 0);
    await imagesInPlace();
    if (job.firstStop) {
      // A Ctrl+C came (during the writes, or a cancel too late for a request that had ended): nothing is said before the
      // ledger's answer, which the watch's exit timer bounds. That timer's exit says the interruption as the one answer
      // (with --json, the one line); a settle the ledger kept for later is told the same way, at once. A ledger that
      // answers in time gives the job's own answer, and the timer no longer exits.
      await ledgerAnswer();
      if (job.exitedBy || (spendWatch && !job.settled)) return job.interruptedExit();
      job.ledgerAnswered();
    }
    const { files, saved, unwritten, lost } = kept;
    const tookMs = Date.now() - started;
    const seconds = tookMs / 1000;
    // A line that says what was charged (images that could not be written) waits for the ledger, after the writes.
    if (values.json && (unwritten.length || lost.length)) await ledgerAnswer();
    if (values.json) {
      answer(
        JSON.stringify({
          ok: unwritten.length === 0 && lost.length === 0,
          // As every failure's line: what went wrong (stderr's sentences: where the images went instead) and what the ledger charged.
          ...(unwritten.length || lost.length
            ? { code: OUTPUT_NOT_WRITTEN_CODE, message: [...unwritten, ...lost].map((item) => item.told).join(' '), charged: jobJson(job, about).charged }
            : {}),
          operation,
          files: [...files, ...saved],
          // Each file's own format, in the order of `files` (an answer may mix them); `output_format` is the first image's.
          formats: [...files, ...saved].map((file) => kept.formats.get(file) ?? result.output_format),
          ...(lost.length ? { lost: lost.map((item) => item.wanted) } : {}),
          partials: partialFiles,
          size: result.size,
          quality: result.quality,
          background: result.background,
          output_format: result.output_format,
          usage: result.usage ?? null,
          cost: result.cost,
          estimate,
          emulator,
          requestId: result.requestId ?? null,
          seconds,
        }),
      );
    } else {
      const all = [...files, ...saved];
      // Each image's own format (an answer may mix them), as its file is named.
      const formats = [...new Set(result.data.map((image) => image.output_format ?? result.output_format))].join(', ');
      // None written (the disk refused them all: stderr said so, naming each): no "Wrote" line to read as a success.
      if (all.length > 0) {
        ctx.stdout(`Wrote ${all.length} image${all.length === 1 ? '' : 's'} (${result.size}, ${result.quality}, ${formats}) in ${describeElapsed(tookMs)}:`);
        for (const f of all) ctx.stdout(`  ${f}`);
        if (partialFiles.length) ctx.stdout(`and ${partialFiles.length} partial image${partialFiles.length === 1 ? '' : 's'} beside them.`);
      }
      // An emulator's image cost nothing: what it would have cost on the real service.
      ctx.stdout(emulator ? `Would cost on the real service: ${describeQuote(result.cost)} (an emulator made it: nothing was spent)` : `Cost: ${describeQuote(result.cost)}`);
    }
    return unwritten.length || lost.length ? 1 : 0;

    /** Writes one image file of the job (never replacing a file unless --overwrite); Ctrl+C names it from then on. */
    async function write(path: string, bytes: Uint8Array): Promise<void> {
      await writeOutput(path, bytes, overwrite);
      job.noteWritten(path);
    }

    /**
     * Writes final images where asked (the first is image number `first`, from 0); paid for, so never lost: what
     * cannot go there goes to the OS temp directory. Adds them to `kept`.
     */
    async function writeImages(labelled: readonly LabelledImage[], first: number): Promise<void> {
      const unwritten: Lost[] = [];
      // Each named when it is written, for its real format (the client's check labels each image), which may not be the
      // one asked for; its bytes as that check decoded them.
      const formats = labelled.map((image) => image.output_format ?? asked);
      const images = labelled.map(imageBytes);
      const paths = formats.map((format, i) => pathOf(first + i, format));
      // Written at once (each file is its own), reported in order.
      const outcomes = await Promise.allSettled(images.map((bytes, i) => write(paths[i]!, bytes)));
      for (const [i, outcome] of outcomes.entries()) {
        const path = paths[i]!;
        if (outcome.status === 'fulfilled') {
          kept.files.push(path);
          kept.formats.set(path, formats[i]!);
          continue;
        }
        const item: Lost = { wanted: path, bytes: images[i]!, format: formats[i]!, why: errorCode(outcome.reason) };
        // A file that is there already (its name was checked before sending for the format asked; an image of another
        // format has another name, or another process took it since) is never replaced without --overwrite: said so.
        if ((outcome.reason as NodeJS.ErrnoException | undefined)?.code === 'EEXIST') {
          const format = formats[i]!;
          const other = format !== asked ? `image ${first + i + 1} is a ${FORMAT_NAMES[format]} (the service sent another format than asked for), and ` : '';
          item.inTheWay = `${other}${path} already exists: not replaced without --overwrite`;
        }
        unwritten.push(item);
      }
      for (const item of unwritten) {
        // Never thrown out of the stream's loop: the stream is read to its end whatever the disk does.
        if (await save(item)) continue;
        kept.lost.push(item);
        ctx.stderr(`pictor: could not write ${item.wanted} (${item.why}) nor save it to the OS temp directory (${item.fallbackWhy}); kept in memory, tried again at the end.`);
      }
    }

    /**
     * Where final image `index` goes, named for its real format; under a file name the user chose (`--out fox.png`)
     * their name is kept, and stderr says when the image is of another format than that name says.
     */
    function pathOf(index: number, format: OutputFormat): string {
      const path = plan.finalPath(index, format);
      if (plan.named !== undefined && plan.named !== format) {
        ctx.stderr(`pictor: image ${index + 1} is a ${FORMAT_NAMES[format]}, not the ${FORMAT_NAMES[plan.named]} its name says (the service sent another format than asked for); written to ${path} as you named it.`);
      }
      return path;
    }

    /**
     * Saves one image that could not go where asked to the OS temp directory, in the job's one folder there (made for its
     * first such image; a new one when that folder refuses it); false (and why, on the item) when that fails too.
     */
    async function save(item: Lost): Promise<boolean> {
      try {
        const [saved] = fallbackFolder === undefined ? await saveToFallback([item]) : await saveToFallback([item], fallbackFolder).catch(() => saveToFallback([item]));
        fallbackFolder = dirname(saved!);
        job.noteWritten(saved!);
        item.told = item.inTheWay ? `${item.inTheWay}; saved the image to ${saved} instead.` : `could not write ${item.wanted} (${item.why}); saved it to ${saved} instead.`;
        ctx.stderr(`pictor: ${item.told}`);
        kept.saved.push(saved!);
        kept.formats.set(saved!, item.format);
        kept.unwritten.push(item);
        return true;
      } catch (error) {
        item.fallbackWhy = errorCode(error);
        return false;
      }
    }

    /**
     * Once the request is over, whether it failed or not: the images no folder took are tried once more (`saveLost`),
     * then Ctrl+C's watch learns they are written and the job's settle, which waits for them, may go on.
     */
    async function imagesInPlace(): Promise<void> {
      await saveLost();
      job.imagesWritten();
      imagesSaved();
    }

    /** Once the request is over: tries the images no folder took once more; those still refused are told lost, the disk the cause. */
    async function saveLost(): Promise<void> {
      const lost = kept.lost.splice(0);
      for (const item of lost) {
        if (await save(item)) continue;
        kept.lost.push(item);
        item.told = `could not write ${item.wanted} (${item.why}) nor save it to the OS temp directory (${item.fallbackWhy}): the disk refused it, not the service; the service made it, so it is charged.`;
        ctx.stderr(`pictor: ${item.told}`);
      }
    }
  } finally {
    stopProgress();
    // Closing waits for the settle, which waits for this.
    imagesSaved();
    try {
      await connection.close();
    } finally {
      // Even when closing fails: a Ctrl+C after this run is no longer this job's to answer.
      job.close();
    }
  }
}

/**
 * The final images written where asked, those saved to the temp directory instead (and why those could not go where
 * asked), and those neither took (kept in memory until the end, then told lost).
 */
interface Kept {
  files: string[];
  saved: string[];
  unwritten: Lost[];
  lost: Lost[];
  /** The real format of each file in `files` and `saved` (an answer may mix formats). */
  formats: Map<string, OutputFormat>;
}

interface Lost {
  wanted: string;
  bytes: Uint8Array;
  /** Its real format (its bytes'), which names it. */
  format: OutputFormat;
  why: string;
  /** Why it could not be written when a file of its name was there already (the sentence says so, and names the file). */
  inTheWay?: string | undefined;
  fallbackWhy?: string | undefined;
  /** The sentence stderr said last about it (where it went instead, or that it is lost), without the `pictor: ` prefix. */
  told?: string | undefined;
}

function errorCode(error: unknown): string {
  return describeFileError(error);
}

const COMMON_OPTIONS = `  --n N                 images to make, 1–10 (default 1)
  --size WxH            1024x1024 (default), 1024x1536, 1536x1024
  --quality Q           low, medium, high, auto (default auto)
  --background B        transparent, opaque, auto (default auto)
  --format F            png (default), jpeg, webp
  --compression C       0–100, jpeg or webp only (default: not sent)
  --moderation M        low, auto (default auto)
  --user U              end-user identifier passed to the service (default: none)
  --stream              stream partial images as they come (default off)
    --partial-images K  with --stream: partial images per image, 0–3 (default: not sent, the service decides)
  --out PATH            a directory or a file name, see below (default: ./out/)
  --overwrite           replace files that exist (default: refuse, before anything is sent)
  --json                print one machine-readable result on stdout (default off)
  -h, --help            this help

Output files: in a directory, new files named after the prompt with a time stamp and a random
suffix (a-fox-20250101-120000-3f9a2c.png). A file name must end in the format's extension (.png,
.jpg or .jpeg, .webp), or gets it; several images become numbered siblings (fox.png, fox-2.png) and
partial images fox.partial-1.png, numbered from 1. An image the service sends in another format than
asked gets that format's extension, except under a file name you gave (said on stderr). An existing file
is never replaced without --overwrite.
Relative paths start from the directory you run the command in. Nothing is sent (or paid) until the
request is valid and --out can be written. Exit codes: 0 done; 2 invalid input or settings, nothing
sent; 1 the service or network failed (the message says whether it may have been billed), or the
images could not be written where asked (they are then saved in the OS temp directory and the path
is printed), or a cap or a busy ledger refused the job before anything was sent (nothing billed:
stderr then ends "Nothing was sent." and the --json code is budget_… or ledger_busy); 130 stopped by Ctrl+C
(what was written and what the ledger charged are said, on stdout too with --json); 143 stopped by SIGTERM,
told the same way.
Environment: PICTOR_BASE_URL, PICTOR_API_KEY, PICTOR_TIMEOUT_SECONDS (default 900) and more: "pictor --help".`;

export const GENERATE_USAGE = `Usage: pictor generate --prompt TEXT [options]

  --prompt TEXT         what to make (required)
${COMMON_OPTIONS}`;

export const EDIT_USAGE = `Usage: pictor edit --prompt TEXT --image FILE [--image FILE …] [options]

  --prompt TEXT         what to change (required)
  --image FILE          a PNG, JPEG or WebP file to edit, up to 50 MB (up to 16 --image)
${COMMON_OPTIONS}`;
