import { InputRefusedError } from '../runner/index.js';

/**
 * Why a press of a job's button is refused before the runner is asked, by what the press names: its job's record is
 * gone (past its day, deleted), is another server's (a custom_id is only a string), or keeps no prompt to send again
 * (its member erased it); a Cancel or Delete pressed by a member who neither asked for the job nor is an admin, or
 * the form of an "Edit image" draft another member opened (`not_requester`), or a Cancel of a job that has already finished, or whose every image has arrived
 * (`job_finished`). An edit's images gone are the images' own refusal (`InputImageError`'s `no_images`).
 */
export const PRESS_REFUSAL_CODES = ['job_gone', 'job_other_scope', 'prompt_erased', 'not_requester', 'job_finished'] as const;
export type PressRefusalCode = (typeof PRESS_REFUSAL_CODES)[number];

/** A press of a job's button refused before anything was spent (the member's: `InputRefusedError`). */
export class PressRefusedError extends InputRefusedError<PressRefusalCode> {}
