import { describeSpendRefusal, type ValidationError } from '../../src/index.js';
import { describeValidation } from './describe-failure.js';
import { JobRefusedError } from './JobRefusedError.js';
import { isDmScope, type FieldNames, type Platform, type PolicyRefusalCode, type QuotaStore } from './types.js';

type Refusal = Extract<Awaited<ReturnType<QuotaStore['reserve']>>, { ok: false }>;

/** What a Discord server and a Slack workspace are called in a sentence (every sentence of the runner). */
export const SCOPE_NAMES: Readonly<Record<Platform, string>> = { discord: 'this server', slack: 'this workspace' };
/** A person's own scope (DMs, user installs) in a sentence: its caps are the operator's DM caps. */
const DM_SCOPE_NAME = 'your use of the bot outside servers';

/** A validation error of the core as a refusal naming the field (as the surface calls it) and what it accepts. */
export function refusalFromValidation(error: ValidationError, fieldNames?: FieldNames): JobRefusedError {
  return new JobRefusedError('validation_error', describeValidation(error, fieldNames), {
    field: error.param,
    allowed: error.allowed,
    cause: error,
  });
}

/** A store's refusal as a job refusal: the core's one sentence for it, with the limit and when it resets. */
export function refusalFromReservation(
  refusal: Refusal,
  context: { estimateUsd: number; platform: Platform; now: number; scopeId?: string | undefined },
): JobRefusedError {
  const { code, limit, used, resetsAt } = refusal;
  const scopeName = context.scopeId !== undefined && isDmScope(context.scopeId) ? DM_SCOPE_NAME : SCOPE_NAMES[context.platform];
  const message = describeSpendRefusal(refusal, { estimateUsd: context.estimateUsd, now: context.now, scopeName });
  return new JobRefusedError(code, message, code === 'user_concurrency' ? { limit, used } : { limit, used, resetsAt });
}


/**
 * A scope rule's refusal as one sentence saying why and what to do:
 * "Images can't be made in this channel; use <#123>." Channel mentions are
 * written `<#id>`, which Discord and Slack both show as a link.
 */
export function refusalFromPolicy(
  code: PolicyRefusalCode,
  context: { platform: Platform; word?: string | undefined; channels?: readonly string[] | undefined; allowed?: string | undefined; limit?: number | undefined; used?: number | undefined },
): JobRefusedError {
  const here = SCOPE_NAMES[context.platform];
  switch (code) {
    case 'scope_not_allowed':
      return new JobRefusedError(code, `This bot is not enabled for ${here}: its operator has not allowed it here, so it makes no images. Ask the bot’s operator to add ${here}.`);
    case 'dms_not_enabled':
      return new JobRefusedError(code, 'This bot makes images only in the servers it was added to: its operator has not turned on DMs and user installs. Use it in one of those servers.');
    case 'member_blocked':
      return new JobRefusedError(code, `An admin of ${here} has blocked you from making images here; ask one of them if you think this is a mistake.`);
    case 'channel_not_allowed': {
      const where = (context.channels ?? []).slice(0, 10).map((id) => `<#${id}>`).join(', ');
      return new JobRefusedError(code, `Images can’t be made in this channel; use ${where}.`);
    }
    case 'member_not_allowed':
      return new JobRefusedError(code, `The admins of ${here} have chosen who may make images, and you are not among them; ask one of them for access.`);
    case 'blocked_word':
      return new JobRefusedError(code, `Your prompt contains “${context.word}”, which is blocked here; rephrase it and try again.`, { field: 'prompt' });
    case 'too_many_images':
      return new JobRefusedError(code, `At most ${context.limit} ${context.limit === 1 ? 'image' : 'images'} per job can be made here; ask for fewer.`, {
        field: 'n',
        limit: context.limit,
        used: context.used,
      });
    case 'quality_not_allowed':
      return new JobRefusedError(code, `That quality is not allowed here; choose one of ${context.allowed}.`, { field: 'quality', allowed: context.allowed });
    case 'high_quality_not_allowed':
      return new JobRefusedError(code, `Quality high is kept for some members of ${here}; choose another quality or ask an admin.`, { field: 'quality' });
    case 'size_not_allowed':
      return new JobRefusedError(code, `That size is not allowed here; choose one of ${context.allowed}.`, { field: 'size', allowed: context.allowed });
    case 'moderation_not_allowed':
      return new JobRefusedError(code, `Moderation low is not allowed here; leave moderation unset to use ${here}’s level.`, { field: 'moderation' });
  }
}
