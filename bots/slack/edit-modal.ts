import type { types } from '@slack/bolt';
import { z } from 'zod';
import { BACKGROUNDS, LIMITS, OUTPUT_FORMATS, QUALITIES, SIZES } from 'pictor';
import { say, sayWords, words, type FieldNames, type JobOptions } from '../runner/index.js';
import { checkImageFiles, imageFilesOf, type SlackFileRef } from './input-images.js';
import { isSlackInputError, SlackInputError } from './SlackInputError.js';
import { plainTextOf, truncate } from './slack-text.js';

export const EDIT_VIEW_ID = 'pictor_edit_view';

/** Slack's limits: a file_input takes up to 10 files; a text input up to 3000 characters. */
const FILE_INPUT_MAX = 10;
const PROMPT_INPUT_MAX = Math.min(3000, LIMITS.promptMaxChars);

/** Where the edit goes and what it edits; kept in the modal's private_metadata (3000 characters at most). */
const EditContextSchema = z.object({
  /** Channel of the job's message. */
  c: z.string(),
  /** Thread of the job's message. */
  t: z.string().optional(),
  /** The images to edit, when they are known already (shortcut, Edit button). */
  f: z.array(z.object({ id: z.string(), n: z.string().optional() })).max(LIMITS.editImagesMax).optional(),
  /** A response_url for private notes, when the modal came from a command or shortcut. */
  u: z.string().optional(),
  /** An edit of a private result: private too. */
  p: z.literal(1).optional(),
  /** Runs in the submitter's own direct messages with the app, opened as the form is submitted (`c` is their id until then). */
  d: z.literal(1).optional(),
});

export interface EditContext {
  channelId: string;
  threadTs?: string | undefined;
  files?: SlackFileRef[] | undefined;
  responseUrl?: string | undefined;
  /** An edit of a private result: shown only to the member, as the result was. */
  private?: boolean | undefined;
  /**
   * The edit of a job asked in another member's direct messages: it runs in the submitter's own direct messages with
   * the app, which are opened as the form is submitted, not before it opens (`channelId` is the submitter's id until then).
   */
  inOwnDirectMessages?: boolean | undefined;
  /** Text to start the prompt with (not kept in the metadata). */
  initialPrompt?: string | undefined;
}

const SELECTS = [
  { block: 'size', name: 'size', field: 'size', values: SIZES },
  { block: 'quality', name: 'quality', field: 'quality', values: QUALITIES },
  { block: 'background', name: 'background', field: 'background', values: BACKGROUNDS },
  { block: 'format', name: 'format', field: 'output_format', values: OUTPUT_FORMATS },
  { block: 'n', name: 'images', field: 'n', values: Array.from({ length: LIMITS.nMax - LIMITS.nMin + 1 }, (_, i) => String(LIMITS.nMin + i)) },
] as const;

/**
 * Each option's first choice, preselected: it sends nothing, so the intake fills in what applies to whoever submits —
 * their own default, else the workspace's, else the spec's — as for a flag left out of `/imagine`. The form never
 * decides a default itself: left as it opened, it asks only what the member would get by choosing nothing.
 */
export const DEFAULT_CHOICE = 'default';

/** The request's fields as the modal calls them, for the runner's refusals (its English labels, as the spec's names read). */
export const MODAL_FIELD_NAMES: FieldNames = Object.fromEntries(SELECTS.map((select) => [select.field, select.name]));

const option = (value: string, text = value): types.PlainTextOption => ({ text: { type: 'plain_text', text }, value });

/**
 * The edit modal: a prompt, the options (choices from the spec's constants,
 * after a preselected "your default" that sends nothing: `DEFAULT_CHOICE`), and
 * a file input when the images are not known yet (`/imagine-edit`).
 */
export function editModal(context: EditContext, locale?: string): types.ModalView {
  const known = context.files ?? [];
  const metadata = JSON.stringify({
    c: context.channelId,
    ...(context.threadTs ? { t: context.threadTs } : {}),
    ...(known.length ? { f: known.map((f) => ({ id: f.id, ...(f.name ? { n: f.name.slice(0, 80) } : {}) })) } : {}),
    ...(context.responseUrl ? { u: context.responseUrl } : {}),
    ...(context.private ? { p: 1 as const } : {}),
    ...(context.inOwnDirectMessages ? { d: 1 as const } : {}),
  } satisfies z.input<typeof EditContextSchema>);
  const blocks: types.KnownBlock[] = [];
  if (known.length) {
    const names = known.map((f) => f.name ?? f.id).join(', ');
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: say(locale, 'slack.edit.editing', { count: known.length, names }).slice(0, 2000) }] });
  } else {
    blocks.push({
      type: 'input',
      block_id: 'files',
      label: { type: 'plain_text', text: say(locale, 'slack.edit.files', { max: FILE_INPUT_MAX }) },
      element: { type: 'file_input', action_id: 'value', filetypes: ['png', 'jpg', 'jpeg', 'webp'], max_files: FILE_INPUT_MAX },
    });
  }
  blocks.push({
    type: 'input',
    block_id: 'prompt',
    label: { type: 'plain_text', text: say(locale, 'edit.what_should_change') },
    element: {
      type: 'plain_text_input',
      action_id: 'value',
      multiline: true,
      max_length: PROMPT_INPUT_MAX,
      placeholder: { type: 'plain_text', text: say(locale, 'slack.edit.placeholder') },
      ...(context.initialPrompt ? { initial_value: truncate(plainTextOf(context.initialPrompt), PROMPT_INPUT_MAX) } : {}),
    },
  });
  const byDefault = option(DEFAULT_CHOICE, say(locale, 'slack.edit.default_choice').slice(0, 75));
  for (const select of SELECTS) {
    blocks.push({
      type: 'input',
      block_id: select.block,
      label: { type: 'plain_text', text: say(locale, 'slack.edit.label', { field: select.block }) },
      element: {
        type: 'static_select',
        action_id: 'value',
        options: [byDefault, ...select.values.map((value) => option(value))],
        initial_option: byDefault,
      },
    });
  }
  return {
    type: 'modal',
    callback_id: EDIT_VIEW_ID,
    title: { type: 'plain_text', text: say(locale, 'slack.edit.title').slice(0, 24) },
    submit: { type: 'plain_text', text: say(locale, 'button.edit').slice(0, 24) },
    close: { type: 'plain_text', text: say(locale, 'button.cancel').slice(0, 24) },
    private_metadata: metadata,
    blocks,
  };
}

/**
 * A submitted edit form: what it asks, or the errors shown next to its fields — with `refused`, for the log, the
 * refusal of the first field refused in the form's order (its prompt, missing: `missing_prompt`; its options top to
 * bottom, a choice this version does not offer: `invalid_option`; its files, none, one not an image or no longer in
 * Slack, too large, of a type it cannot edit) as a `SlackInputError`: a submission refused is one line, however many
 * fields it refused. A form whose hidden data (its metadata) this version cannot read is refused as a whole before its
 * fields are read: `form_out_of_date`, shown next to its prompt.
 */
export type EditSubmission =
  | { ok: true; context: EditContext; prompt: string; options: JobOptions; files: SlackFileRef[] }
  | { ok: false; errors: Record<string, string>; refused: SlackInputError };

type StateValues = Record<string, Record<string, { value?: string | null; selected_option?: { value?: string } | null; files?: unknown[] }>>;

/**
 * Reads a submitted edit modal and checks what it holds (a prompt, options
 * among the modal's choices, the images' count, size and declared type) so
 * Slack can show an error next to the field before anything is downloaded or
 * spent. The spec's rules are the runner's (its intake parses the request once).
 */
export function readEditSubmission(view: { private_metadata?: string; state?: { values?: unknown } }, locale?: string): EditSubmission {
  let meta: z.output<typeof EditContextSchema>;
  try {
    meta = EditContextSchema.parse(JSON.parse(view.private_metadata ?? ''));
  } catch {
    // Opened by another version (its hidden data not this one's): refused as a whole, shown next to its prompt.
    const refused = new SlackInputError('form_out_of_date', words('slack.edit.out_of_date'));
    return { ok: false, errors: { prompt: plain(sayWords(locale, refused.words)) }, refused };
  }
  const values = (view.state?.values ?? {}) as StateValues;
  const text = (block: string) => values[block]?.value?.value ?? '';
  const selected = (block: string) => values[block]?.value?.selected_option?.value;
  const errors: Record<string, string> = {};

  // Each field's refusal, in the form's order: the first is the one logged.
  const fieldRefusals: SlackInputError[] = [];
  const refuseField = (block: string, refusal: SlackInputError) => {
    errors[block] = plain(sayWords(locale, refusal.words));
    fieldRefusals.push(refusal);
  };

  const prompt = text('prompt').trim();
  if (!prompt) refuseField('prompt', new SlackInputError('missing_prompt', words('slack.edit.say_what')));

  const options: Record<string, string | number> = {};
  for (const select of SELECTS) {
    const value = selected(select.block);
    if (value === undefined || value === DEFAULT_CHOICE) continue;
    if (!(select.values as readonly string[]).includes(value)) refuseField(select.block, new SlackInputError('invalid_option', words('slack.edit.pick_one', { values: select.values.join(', ') })));
    else options[select.field] = select.field === 'n' ? Number(value) : value;
  }
  const files: SlackFileRef[] = meta.f ? meta.f.map((f) => ({ id: f.id, name: f.n })) : imageFilesOf(values.files?.value?.files);
  const fileBlock = meta.f ? 'prompt' : 'files';
  let refused: SlackInputError | undefined;
  if (!meta.f && Array.isArray(values.files?.value?.files) && values.files.value.files.length > files.length) {
    // A file that is not an image, or that Slack no longer has (deleted): left out by `imageFilesOf`.
    refused = new SlackInputError('file_not_image', words('slack.edit.only_images'));
  } else {
    try {
      checkImageFiles(files);
    } catch (error) {
      if (!isSlackInputError(error)) throw error;
      refused = error;
    }
  }
  // Shown next to its field, unless that field already shows another error (a form whose images it named, showing
  // its prompt's): then it is not shown, until a submission shows it.
  if (refused && errors[fileBlock] === undefined) refuseField(fileBlock, refused);
  const [first] = fieldRefusals;
  if (first) return { ok: false, errors, refused: first };
  return {
    ok: true,
    context: { channelId: meta.c, threadTs: meta.t, responseUrl: meta.u, files, private: meta.p === 1, inOwnDirectMessages: meta.d === 1 },
    prompt,
    options: options as JobOptions,
    files,
  };
}

/** Modal errors are plain text: drop mrkdwn marks. */
function plain(text: string): string {
  return text.replace(/[*`]/g, '');
}
