import type { App } from '@slack/bolt';
import type { BotContext } from '../bot-context.js';
import { localeIn } from '../user-locales.js';

/** The Home tab: published when a member opens it (`app_home_opened`, tab `home`), in their language (`HomeTabs`). */
export function registerAppHome(app: App, context: BotContext): void {
  app.event('app_home_opened', async ({ event, body, context: auth }) => {
    if (event.tab !== 'home') return;
    const actor = { userId: event.user, teamId: body.team_id, channelId: event.channel, locale: localeIn(auth) };
    await context.homes.opened(context.workspace(auth).client, actor, context.jobs.requester(actor));
  });
}
