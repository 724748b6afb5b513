import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userFacingLiterals } from '../helpers/user-facing-literals.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * Files whose words are the operator's, not a member's: they stay English (the log, the console, the terminal, the
 * settings read from the environment), or are not words at all (storage, HTTP answers to Discord's servers).
 */
const OPERATOR_FILES: Readonly<Record<string, string>> = {
  'bots/main.ts': 'what npm start prints for the operator',
  'bots/console-view.ts': 'the operator’s console',
  'bots/read-download.ts': 'an internal error, logged',
  'bots/runner/config.ts': 'the environment’s settings, for the operator',
  'bots/runner/job-history.ts': 'storage',
  'bots/discord/config.ts': 'the environment’s settings, for the operator',
  'bots/discord/deploy-commands.ts': 'the operator’s deploy script (the commands’ own words are the catalog’s)',
  'bots/discord/surface.ts': 'what the bot prints at start for the operator',
  'bots/discord/unreachable.ts': 'what the bot prints when Discord cannot be reached',
  'bots/discord/interactions-endpoint.ts': 'HTTP answers to Discord’s servers, never shown to a member',
  'bots/discord/gateway-lease.ts': 'a lease in Redis; its reasons are logged',
  'bots/discord/gateway-connection.ts': 'logged',
  'bots/discord/JobRecordStore.ts': 'storage; its errors stop the bot at start, for the operator',
  'bots/slack/config.ts': 'the environment’s settings, for the operator',
  'bots/slack/surface.ts': 'what the bot prints at start for the operator',
  'bots/slack/start-slack-bot.ts': 'start-up, logged and printed for the operator',
  'bots/slack/installation-store.ts': 'storage',
  'bots/slack/socket-replicas.ts': 'a lease in Redis; its reasons are logged',
  'bots/slack/shared-write-buckets.ts': 'Redis; its errors are logged',
};

/** Single strings elsewhere that read as words and are none of a member's, each with why. */
const NOT_WORDS: readonly { file: string; text: string; why: string }[] = [
  { file: 'bots/discord/start-discord-bot.ts', text: 'discord jobs', why: 'the sweeper’s name in the log' },
  { file: 'bots/discord/ReplyTarget.ts', text: 'Discord did not open a DM with the user', why: 'an error the reply keeps to itself, never shown' },
  { file: 'bots/discord/rest-request.ts', text: 'Discord did not answer a post (it may have made it)', why: 'an error of the REST client, logged, never shown' },
  { file: 'bots/discord/nonce-window.ts', text: 'a send of a message was not made: Discord no longer keeps its nonce', why: 'an error of the REST client, logged, never shown' },
  { file: 'bots/discord/nonce-window.ts', text: 'a message with an enforced nonce was posted on a REST client that checks no nonce window (build it with withPostsSentOnce)', why: 'an error of ours (internal_error), logged, never shown' },
  { file: 'bots/slack/download-slack-file.ts', text: 'Bearer {}', why: 'an HTTP header' },
  { file: 'bots/slack/listeners/budget-commands.ts', text: 'admin budget', why: 'what the log says failed' },
  { file: 'bots/runner/audit-log.ts', text: 'audit posts keep failing: the admins’ settings view says so', why: 'the log (the admins read it in the settings view, worded in the catalog)' },
  { file: 'bots/runner/audit-log.ts', text: 'an audit post failed: its channel is gone; its entries were dropped', why: 'the log' },
  { file: 'bots/runner/audit-log.ts', text: 'an audit post failed; its entries are posted again later', why: 'the log' },
  { file: 'bots/runner/audit-log.ts', text: 'the platform’s answer to an audit post was lost', why: 'an error’s message, for the log' },
  { file: 'bots/slack/listeners/mentions.ts', text: 'failed again', why: 'a claim’s outcome, compared in code' },
  { file: 'bots/slack/bot-context.ts', text: 'the response_url answered {}: used up or expired', why: 'an error’s message, caught by privateAnswerVia, which sends the note to the member’s direct messages and logs only the status' },
  { file: 'bots/discord/interaction-action.ts', text: 'this discord.js has no InteractionCreate action to read the channel a thread is in: a channels rule refuses jobs asked in threads and forum posts of an allowed channel', why: 'a warning for the operator’s log (the client’s warn event)' },
  { file: 'bots/discord/handle-buttons.ts', text: 'its kept images', why: 'what a press waited for, named in an error for the log (AnswerBudget.within)' },
  { file: 'bots/discord/handle-buttons.ts', text: 'the state store', why: 'what a press waited for, named in an error for the log (AnswerBudget.within)' },
  { file: 'bots/discord/handle-buttons.ts', text: 'who runs its job', why: 'what a press waited for, named in an error for the log (AnswerBudget.within)' },
  { file: 'bots/discord/handle-buttons.ts', text: 'its Retry', why: 'what a press waited for, named in an error for the log (AnswerBudget.within)' },
  { file: 'bots/discord/handle-buttons.ts', text: 'Discord', why: 'what a press waited for, named in an error for the log (AnswerBudget.within)' },
  { file: 'bots/discord/commands/job-options.ts', text: 'the house styles', why: 'what the style autocomplete waited for, named in an error for the log (AnswerBudget.within)' },
  { file: 'bots/discord/route-interaction.ts', text: 'the state store', why: 'what a press waited for, named in an error for the log (AnswerBudget.within)' },
  { file: 'bots/slack/SlackJobView.ts', text: 'Slack rate-limited the first message of a job: it is posted again when Slack’s Retry-After is over', why: 'the log' },
  { file: 'bots/slack/SlackJobView.ts', text: 'Slack rate-limited a message of a job that is sent once: it is posted again when Slack’s Retry-After is over', why: 'the log' },
  { file: 'bots/runner/JobRunner.ts', text: 'the checks before a form', why: 'the intake step a request waited for, named in an error for the log (withinDeadline); the member is told an error on the bot’s side from the catalog' },
  { file: 'bots/runner/JobRunner.ts', text: 'the house styles', why: 'the intake step a request waited for, named in an error for the log (withinDeadline); the member is told an error on the bot’s side from the catalog' },
  { file: 'bots/runner/JobRunner.ts', text: 'the member’s defaults', why: 'the intake step a request waited for, named in an error for the log (withinDeadline); the member is told an error on the bot’s side from the catalog' },
  { file: 'bots/runner/JobRunner.ts', text: 'the rules of the server/workspace', why: 'the intake step a request waited for, named in an error for the log (withinDeadline); the member is told an error on the bot’s side from the catalog' },
  { file: 'bots/runner/JobRunner.ts', text: 'the budgets', why: 'the intake step a request waited for, named in an error for the log (withinDeadline); the member is told an error on the bot’s side from the catalog' },
  { file: 'bots/runner/JobRunner.ts', text: 'the ledger', why: 'the intake step a request waited for, named in an error for the log (withinDeadline); the member is told an error on the bot’s side from the catalog' },
  { file: 'bots/runner/JobRunner.ts', text: 'job refused', why: 'the log line of what the intake did not take (NOT_TAKEN: logJobFailure’s `refused` and `failed`)' },
  { file: 'bots/runner/JobRunner.ts', text: 'the runner did not take a job', why: 'the log line of what the intake did not take (NOT_TAKEN: logJobFailure’s `refused` and `failed`)' },
  { file: 'bots/runner/JobRunner.ts', text: 'form refused', why: 'the log line of what the intake did not take (NOT_TAKEN: logJobFailure’s `refused` and `failed`)' },
  { file: 'bots/runner/JobRunner.ts', text: 'the runner did not open a form', why: 'the log line of what the intake did not take (NOT_TAKEN: logJobFailure’s `refused` and `failed`)' },
  { file: 'bots/runner/JobRunner.ts', text: 'admitted job refused before it was sent', why: 'the log line of what the intake did not take (NOT_TAKEN: logJobFailure’s `refused` and `failed`)' },
  { file: 'bots/runner/JobRunner.ts', text: 'an admitted job could not start', why: 'the log line of what the intake did not take (NOT_TAKEN: logJobFailure’s `refused` and `failed`)' },
  { file: 'bots/runner/scope-settings.ts', text: '{} may hold at most {} entries', why: 'an error for the log: members and admins are answered invalid_value (settings.too_many)' },
];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path === join('bots', 'runner', 'locales') ? [] : sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('every sentence a member sees is in the catalog', () => {
  it('the surfaces and the runner hold no words outside the catalogs (bots/runner/locales), but the operator’s', () => {
    const found = sources('bots')
      .filter((file) => !(file in OPERATOR_FILES) && !file.startsWith(join('bots', 'state')))
      .flatMap((file) => userFacingLiterals(file, readFileSync(join(ROOT, file), 'utf8')))
      .filter((literal) => !NOT_WORDS.some((w) => w.file === literal.file && w.text === literal.text))
      .map((literal) => `${literal.file}:${literal.line} ${literal.text}`);
    expect(found).toEqual([]);
  });

  it('every file it leaves out exists (a moved file is scanned again, not forgotten)', () => {
    const all = new Set(sources('bots'));
    for (const file of [...Object.keys(OPERATOR_FILES), ...NOT_WORDS.map((w) => w.file)]) expect(all.has(file), file).toBe(true);
  });

  it('finds a sentence built by concatenation, a button label and a modal title, and leaves the log, keys and errors alone', () => {
    const source = `
      import { thing } from 'some module';
      function render(job, ahead, locale) {
        logger.info({ jobId: job.id }, 'job queued for a while');
        this.#logError(error, 'could not post a preview');
        await acknowledge('cancel: defer update', () => interaction.deferUpdate(), logger);
        if (!ok) throw new TypeError('the store is closed');
        const label = say(locale, 'discord.job.queued', { ahead });
        const headers = { 'Content-Type': 'application/json', authorization: 'x' };
        const status: 'not_allowed' | 'asked' = 'asked';
        const line = ahead === 1 ? 'Next in line' : \`In the queue: \${ahead} jobs ahead of yours\`;
        const button = { type: 2, label: 'Cancel', custom_id: 'cancel:' + job.key };
        return new ModalBuilder().setTitle('Edit ' + job.n + ' images');
      }`;
    expect(userFacingLiterals('example.ts', source).map((l) => l.text)).toEqual(['Next in line', 'In the queue: {} jobs ahead of yours', 'Cancel', 'Edit ']);
  });
});
