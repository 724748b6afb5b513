import type { MemberDefaultView } from './member-defaults.js';
import { defaultQualityFor, unreadableRulesRefusal, type EffectiveSettings } from './scope-policy.js';
import type { Requester } from './types.js';
import { scopeWordOf } from './describe-refusal.js';
import { describeFailure } from './describe-failure.js';
import { say, type Markup } from './words.js';

/** How a surface names its commands in the view: the one that changes a member's defaults, and how to clear one. */
export interface MemberDefaultsCommands {
  change: string;
  clear: string;
  /** The surface's main command as configured (a Slack app's renamed `/imagine`), said where a refusal names it; `/imagine` when none is given. */
  surface?: string | undefined;
}

/**
 * A member's settings view: their own defaults, each marked when the rules of
 * this server/workspace do not let it be used here (or when it is kept but cannot be read), beside the server's/
 * workspace's own defaults and bounds (or, while one of its rules cannot be read, that every job is refused) — in the
 * member's language. The default quality is the one `viewer` gets, as the policy decides it (a default of `high` that
 * `high-quality` does not list them for is not theirs).
 */
export function describeMemberDefaults(mine: readonly MemberDefaultView[], scope: EffectiveSettings, viewer: Requester, commands: MemberDefaultsCommands, locale?: string, markup?: Markup): string {
  const word = scopeWordOf(scope.platform, scope.scopeId);
  const lines = [describeOwnDefaults(mine, scope, locale, markup)];
  // While a rule cannot be read every job is refused: the limits that would apply otherwise are not shown as if they did.
  const refused = unreadableRulesRefusal(scope);
  lines.push(
    refused ? describeFailure(refused, locale, commands.surface).message : say(
      locale,
      'member.scope',
      {
        scope: word,
        size: scope.defaultSize.value,
        quality: defaultQualityFor(viewer, scope),
        previews: scope.defaultPreviews.value,
        maxImages: scope.maxImages.value,
        privateResults: scope.privateResults.value ? 'yes' : 'no',
      },
      markup,
    ),
  );
  lines.push(describeHowToChange(commands, locale));
  return lines.join('\n');
}

/** The member's own defaults alone (a title, then one line each, or that they set none), for a view that shows the scope's its own way (Slack's Home tab). */
export function describeOwnDefaults(mine: readonly MemberDefaultView[], scope: Pick<EffectiveSettings, 'platform' | 'scopeId'>, locale?: string, markup?: Markup): string {
  const word = scopeWordOf(scope.platform, scope.scopeId);
  const lines = [say(locale, 'member.title', { scope: word }, markup)];
  if (mine.length === 0) lines.push(say(locale, 'member.none', { scope: word }));
  for (const { name, value, ignoredHere, unreadable } of mine) {
    // One kept but unreadable has no value to show: that it refuses their jobs until set again or cleared.
    if (unreadable) {
      lines.push(say(locale, 'member.line', { name, value: '', ignored: 'unreadable' }));
      continue;
    }
    const shown = typeof value === 'boolean' ? say(locale, 'member.on_off', { on: value ? 'yes' : 'no' }) : String(value);
    // A private default the rules forbid is not set aside like an option's: the job is refused (never shown in public against the member's wish).
    const ignored = !ignoredHere ? 'no' : name === 'private' ? 'refused' : 'yes';
    lines.push(say(locale, 'member.line', { name, value: shown, ignored }));
  }
  return lines.join('\n');
}

/** How a member changes or clears their defaults, as the surface calls its commands. */
export function describeHowToChange(commands: MemberDefaultsCommands, locale?: string): string {
  return say(locale, 'member.how', { command: commands.change, clear: commands.clear });
}
