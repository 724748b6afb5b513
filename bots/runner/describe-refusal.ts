import { type ValidationError } from 'pictor';
import { BUDGETS, leftOf } from 'pictor/internal';
import { COMMAND_NAMES } from './command-words.js';
import { validationWords } from './describe-failure.js';
import { JobRefusedError } from './JobRefusedError.js';
import { isDmScope, type FieldNames, type Platform, type PolicyRefusalCode, type QuotaStore } from './types.js';
import { anyOf, duration, durationUntil, listOf, resetTime, usd, words, type Words } from './words.js';
import { settingLabel } from './setting-words.js';
import type { SettingName } from './scope-settings.js';
import type { MemberDefaultName } from './member-defaults.js';

type Refusal = Extract<Awaited<ReturnType<QuotaStore['reserve']>>, { ok: false }>;

/** What a sentence calls the scope: a Discord server, a Slack workspace, or a person's own (DMs, user installs). A `select` value of the catalog. */
export type ScopeWord = 'server' | 'workspace' | 'dm';

/**
 * The surface's main command as a refusal names it (`{command} settings --private off`): Slack's default `/imagine`;
 * a surface whose command has another name says the words with its own (`command` in the refusal's values).
 */
export const SURFACE_COMMAND = '/imagine';

/** The scope word of a platform (every sentence of the runner says "this server" or "this workspace"). */
export const SCOPE_WORDS: Readonly<Record<Platform, ScopeWord>> = { discord: 'server', slack: 'workspace' };

/** The scope word of a scope id: a person's own scope is `dm`. */
export function scopeWordOf(platform: Platform, scopeId: string | undefined): ScopeWord {
  return scopeId !== undefined && isDmScope(scopeId) ? 'dm' : SCOPE_WORDS[platform];
}

/** A validation error of the core as a refusal naming the field (as the surface calls it) and what it accepts. */
export function refusalFromValidation(error: ValidationError, fieldNames?: FieldNames): JobRefusedError {
  return new JobRefusedError('validation_error', validationWords(error, fieldNames), {
    field: error.param,
    allowed: error.allowed,
    cause: error,
  });
}

/**
 * A store's refusal as a job refusal: which limit, how much of it is used or left, and when it lets the job in
 * again — "This job could cost up to $0.224, more than the $0.050 left of your daily budget of $1.00 (spent $0.95);
 * fewer or cheaper images may fit, and the budget resets at 00:00 UTC (in 3 h 12 min)."
 */
export function refusalFromReservation(
  refusal: Refusal,
  context: { estimateUsd: number; platform: Platform; now: number; scopeId?: string | undefined },
): JobRefusedError {
  const { code, limit, used, resetsAt } = refusal;
  return new JobRefusedError(code, spendRefusalWords(refusal, { ...context, scope: scopeWordOf(context.platform, context.scopeId) }), code === 'user_concurrency' ? { limit, used } : { limit, used, resetsAt });
}

function spendRefusalWords(refusal: Refusal, context: { estimateUsd: number; now: number; scope: ScopeWord }): Words {
  const { code, limit, used, resetsAt } = refusal;
  const scope = context.scope;
  switch (code) {
    case 'user_concurrency':
      return words('refusal.user_concurrency', { used, limit });
    case 'user_cooldown':
      return words('refusal.user_cooldown', { every: duration(limit * 1000), wait: durationUntil(resetsAt, context.now) });
    case 'scope_paused':
      return words('refusal.scope_paused', { scope, used: usd(used), limit: usd(limit) });
    default: {
      const budget = BUDGETS.find((b) => b.code === code);
      if (!budget) return words('refusal.other_limit', { code });
      const left = leftOf(limit, used);
      const values = { owner: budget.owner, scope, period: budget.period, limit: usd(limit), used: usd(used), reset: resetTime(resetsAt, context.now) };
      return left < 0.000_001 || used >= limit
        ? words('refusal.budget_reached', { ...values, left: usd(0) })
        : words('refusal.budget_would_pass', { ...values, estimate: usd(context.estimateUsd), left: usd(left) });
    }
  }
}

/**
 * A scope rule's refusal as one sentence saying why and what to do:
 * "Images can't be made in this channel; use <#123>." Channel mentions are
 * written `<#id>`, which Discord and Slack both show as a link.
 */
export function refusalFromPolicy(
  code: PolicyRefusalCode,
  context: {
    platform: Platform;
    word?: string | undefined;
    channels?: readonly string[] | undefined;
    allowed?: readonly string[] | undefined;
    limit?: number | undefined;
    used?: number | undefined;
    /** `private_not_allowed`: the member's default asked for it, not the command. */
    fromDefault?: boolean | undefined;
    /**
     * `private_not_allowed` of a form's job, before the form opens (`JobRunner.requestForm`) or as it is submitted
     * (`JobIntent.inForm`, private results turned off meanwhile): the advice names no option the form lacks.
     */
    inForm?: boolean | undefined;
    /**
     * `private_not_allowed` of a job a button runs again (a Reroll or Retry, whoever's job it is: `JobIntent.again`):
     * the advice names no option the button lacks — a private job's, the command again without private; one the
     * presser's default makes private, their default turned off and the button pressed again.
     */
    again?: boolean | undefined;
    /** `settings_unreadable`: the scope's restrictions that cannot be read. */
    settings?: readonly SettingName[] | undefined;
  },
): JobRefusedError {
  const scope = SCOPE_WORDS[context.platform];
  const allowed = context.allowed?.join(', ');
  switch (code) {
    case 'channel_not_allowed':
      return new JobRefusedError(code, words('refusal.channel_not_allowed', { channels: listOf((context.channels ?? []).slice(0, 10).map((id) => `<#${id}>`)) }));
    case 'blocked_word':
      return new JobRefusedError(code, words('refusal.blocked_word', { word: context.word ?? '' }), { field: 'prompt', word: context.word });
    case 'too_many_images':
      return new JobRefusedError(code, words('refusal.too_many_images', { limit: context.limit ?? 0 }), { field: 'n', limit: context.limit, used: context.used });
    case 'quality_not_allowed':
      return new JobRefusedError(code, words('refusal.quality_not_allowed', { allowed: anyOf(context.allowed ?? []) }), { field: 'quality', allowed });
    case 'size_not_allowed':
      return new JobRefusedError(code, words('refusal.size_not_allowed', { allowed: anyOf(context.allowed ?? []) }), { field: 'size', allowed });
    case 'high_quality_not_allowed':
      return new JobRefusedError(code, words('refusal.high_quality_not_allowed', { scope }), { field: 'quality' });
    case 'moderation_not_allowed':
      return new JobRefusedError(code, words('refusal.moderation_not_allowed', { scope }), { field: 'moderation' });
    case 'private_not_allowed':
      // The member's own settings command: Slack's as the app configured it (`command`), Discord's as their Discord shows it.
      // A form and a button have no private option: their advice is one the member can follow from where they are.
      return new JobRefusedError(
        code,
        words(context.inForm ? 'refusal.private_not_allowed_form' : context.again ? (context.fromDefault ? 'refusal.private_not_allowed_again_default' : 'refusal.private_not_allowed_again') : 'refusal.private_not_allowed', { scope, platform: context.platform, fromDefault: context.fromDefault ? 'yes' : 'no', command: SURFACE_COMMAND, ...COMMAND_NAMES }),
        { field: 'private' },
      );
    case 'settings_unreadable': {
      // Named as admins type them (`max-images`), with the command that sets them again: Slack's as the app configured it
      // (`command`), Discord's as the admin's Discord shows it (`COMMAND_NAMES`).
      const settings = (context.settings ?? []).map((name) => settingLabel(name));
      return new JobRefusedError(code, words('refusal.settings_unreadable', { scope, count: settings.length, settings: listOf(settings), platform: context.platform, command: SURFACE_COMMAND, ...COMMAND_NAMES }));
    }
    case 'scope_not_allowed':
    case 'dms_not_enabled':
    case 'member_blocked':
    case 'member_not_allowed':
      return new JobRefusedError(code, words(`refusal.${code}`, { scope }));
  }
}

/**
 * A member's own defaults kept but unreadable (`defaults_unreadable`): named as they type them, with the command that
 * sets them again or clears them (Slack's as the app configured it, `command`; Discord's as their Discord shows it).
 */
export function refusalOfUnreadableDefaults(platform: Platform, names: readonly MemberDefaultName[]): JobRefusedError {
  return new JobRefusedError('defaults_unreadable', words('refusal.defaults_unreadable', { count: names.length, defaults: listOf(names), platform, command: SURFACE_COMMAND, ...COMMAND_NAMES }));
}
