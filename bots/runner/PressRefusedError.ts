import { InputRefusedError } from './InputRefusedError.js';

/**
 * Why a press of a job's button is refused before the runner is asked, by what the press names, on either surface: its
 * job's record is gone (past its day, deleted), is another server's or workspace's (a custom_id or a button's value is
 * only a string; a Slack Connect channel shares its buttons), or keeps no prompt to send again (its member erased it);
 * a Cancel, Edit or Delete pressed by a member who neither asked for the job nor is an admin, or the form of an "Edit
 * image" draft another member opened (`not_requester`), or a Cancel of a job that has already finished, or whose every
 * image has arrived, or that no longer runs (`job_finished`); a private server job's button pressed in its member's DM
 * once they are no longer in that server (`not_member`); a button that does nothing any more: one an older version left,
 * whose id this one no longer reads, or that names no action a button has (`unknown_button`); a Retry of a job another press
 * of it already started again (`already_retried`: it runs once; a press while the first is still being checked is told so, not refused), or whose take
 * lapsed and was given back by a later press before its job started (`retry_starting`: nothing ran; pressed again, it runs). An edit's images gone are
 * the images' own refusal (Discord's `InputImageError`'s `no_images`). One list, so one code finds both bots' lines.
 */
export const PRESS_REFUSAL_CODES = ['job_gone', 'job_other_scope', 'prompt_erased', 'not_requester', 'job_finished', 'not_member', 'unknown_button', 'already_retried', 'retry_starting'] as const;
export type PressRefusalCode = (typeof PRESS_REFUSAL_CODES)[number];

/** A press of a job's button refused before anything was spent (the member's: `InputRefusedError`). */
export class PressRefusedError extends InputRefusedError<PressRefusalCode> {}
