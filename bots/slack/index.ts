/** The Slack surface: start it with `startSlackBot(…)`, configured by `readSlackConfig(process.env)`. */
export { startSlackBot, SLACK_BOT_SCOPES, type SlackBot, type SlackBotOptions, type SlackBotSettings, type SlackOAuthOptions } from './start-slack-bot.js';
export { installationKey, slackInstallationStore } from './installation-store.js';
export { readSlackConfig, DEFAULT_SLACK_API_URL, DEFAULT_SLACK_PORT, type SlackConfig, type SlackMode } from './config.js';
export { DEFAULT_FILE_HOSTS, parseFileHost, type FileHost } from './file-hosts.js';
export type { SlackJobRunner } from './SlackJobs.js';
export type { ShownEvent } from './SlackJobView.js';
export { SlackInputError, isSlackInputError, type SlackInputErrorCode } from './SlackInputError.js';
export { slackSurface } from './surface.js';
