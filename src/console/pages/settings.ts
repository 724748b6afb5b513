import { formatUsd } from '../../core/pricing.js';
import type { BreakerState, CapOverrides } from '../../spend/types.js';
import { html, type SafeHtml } from '../html.js';
import type { ChatSettingRow, SettingRow } from '../source.js';
import { page, utcTime, type PageContext } from './layout.js';
import { named } from './spend.js';

export interface SettingsView {
  operator: SettingRow[];
  bots: SettingRow[];
  breaker: Record<string, BreakerState>;
  breakerOn: boolean;
  overrides: Record<string, CapOverrides>;
  /** Per scope; `unreadable` when the bots' state could not be read (said on the page, never shown as none). */
  chatSettings: Record<string, Record<string, ChatSettingRow>> | 'unreadable';
  names: ReadonlyMap<string, string>;
}

const CAP_WORDS: Record<string, string> = {
  userDailyUsd: 'each user, per day',
  userMonthlyUsd: 'each user, per month',
  scopeDailyUsd: 'the server/workspace, per day',
  scopeMonthlyUsd: 'the server/workspace, per month',
};

/** What a chat setting that cannot be read means, in its row's value. */
const UNREADABLE_WORDS: Record<'jobs_refused' | 'default_applies' | 'spend_nothing', string> = {
  jobs_refused: 'cannot be read — jobs refused (every job here, until an admin sets it again or clears it)',
  default_applies: 'cannot be read — default applies (until an admin sets it again)',
  spend_nothing: 'cannot be read — members may spend nothing until an admin sets them again',
};

/** Caps and settings: every cap and setting in force and where it comes from, the chat admins' changes, and the breaker. */
export function settingsPage(context: PageContext, view: SettingsView): SafeHtml {
  const paused = Object.entries(view.breaker).filter(([, s]) => s.pausedAt !== undefined);
  const resumed = Object.entries(view.breaker).filter(([, s]) => s.pausedAt === undefined && s.resumedAt !== undefined);
  const main = html`
<section aria-labelledby="breaker-h">
<h2 id="breaker-h">The breaker</h2>
<p>${
    view.breakerOn
      ? 'On: a server, workspace or DM user whose last hour passes both PICTOR_BREAKER_FACTOR times its own hourly average of the 7 days before and PICTOR_BREAKER_FLOOR_USD is paused until you resume it here.'
      : 'Off: set PICTOR_BREAKER_FACTOR and PICTOR_BREAKER_FLOOR_USD to turn it on.'
  }</p>
${
  paused.length === 0
    ? html`<p data-figure="paused-count" data-count="0">Nothing is paused.</p>`
    : html`<table><caption>Paused: their jobs are refused (<code>scope_paused</code>) until resumed.</caption>
<thead><tr><th scope="col">Where</th><th scope="col">Paused</th><th scope="col">Its last hour</th><th scope="col">Its limit an hour</th><th scope="col">Resume</th></tr></thead>
<tbody>${paused.map(
        ([scopeKey, s]) => html`<tr data-paused="${scopeKey}"><th scope="row">${named(scopeKey, view.names)}</th><td>${utcTime(s.pausedAt!)}</td><td>${formatUsd(s.pausedUsd ?? 0)}</td><td>${formatUsd(s.limitUsd ?? 0)}</td><td>${
          context.allowChanges
            ? html`<form method="post" action="/breaker/resume"><input type="hidden" name="_csrf" value="${context.csrf}"><input type="hidden" name="scope" value="${scopeKey}"><button type="submit">Resume ${scopeKey}</button></form>`
            : 'Read-only console'
        }</td></tr>`,
      )}</tbody></table>`
}
${
  resumed.length === 0
    ? ''
    : html`<table><caption>Resumed lately.</caption><thead><tr><th scope="col">Where</th><th scope="col">Resumed</th><th scope="col">By</th></tr></thead>
<tbody>${resumed.map(([scopeKey, s]) => html`<tr><th scope="row">${named(scopeKey, view.names)}</th><td>${utcTime(s.resumedAt!)}</td><td>${s.resumedBy ?? ''}</td></tr>`)}</tbody></table>`
}
</section>

<section aria-labelledby="operator-h">
<h2 id="operator-h">The operator’s caps and limits</h2>
${settingTable('Set in the environment of every Pictor process (.env); a cap not set means no cap.', view.operator)}
</section>

${
  view.bots.length === 0
    ? ''
    : html`<section aria-labelledby="bots-h"><h2 id="bots-h">The chat bots</h2>${settingTable('What the bots of this process run with.', view.bots)}</section>`
}

<section aria-labelledby="overrides-h">
<h2 id="overrides-h">Caps chat admins set</h2>
${
  Object.keys(view.overrides).length === 0
    ? html`<p>No chat admin has changed a cap. They may lower the user and server/workspace caps of their own server (<code>/imagine-admin budget</code>, <code>/imagine admin budget</code>); never above the operator’s.</p>`
    : html`<table><caption>The lower of these and the operator’s cap applies.</caption>
<thead><tr><th scope="col">Where</th><th scope="col">Cap</th><th scope="col">Amount</th><th scope="col">Set by</th><th scope="col">When</th></tr></thead>
<tbody>${Object.entries(view.overrides).flatMap(([scopeKey, caps]) =>
        Object.entries(caps).map(
          ([cap, o]) => html`<tr><th scope="row">${named(scopeKey, view.names)}</th><td>${CAP_WORDS[cap] ?? cap}</td><td>${formatUsd(o.usd)}</td><td>${named(o.by, view.names)}</td><td>${utcTime(o.at)}</td></tr>`,
        ),
      )}</tbody></table>`
}
</section>

${
  view.chatSettings === 'unreadable'
    ? html`<section aria-labelledby="chat-h"><h2 id="chat-h">Settings chat admins chose</h2>
<p data-chat-settings="unreadable">The chat settings could not be read (the bots’ state did not answer; the log says why). A server or workspace whose rules cannot be read refuses its jobs: reload this page to see them.</p></section>`
    : Object.keys(view.chatSettings).length === 0
    ? ''
    : html`<section aria-labelledby="chat-h"><h2 id="chat-h">Settings chat admins chose</h2>
<table><caption>Per server/workspace, within what the operator allows.</caption>
<thead><tr><th scope="col">Where</th><th scope="col">Setting</th><th scope="col">Value</th><th scope="col">Set by</th><th scope="col">When</th></tr></thead>
<tbody>${Object.entries(view.chatSettings).flatMap(([scopeKey, settings]) =>
        Object.entries(settings).map(([name, s]) =>
          'unreadable' in s
            ? html`<tr data-unreadable="${scopeKey}:${name}"><th scope="row">${named(scopeKey, view.names)}</th><td>${name}</td><td>${UNREADABLE_WORDS[s.unreadable]}</td><td></td><td></td></tr>`
            : html`<tr><th scope="row">${named(scopeKey, view.names)}</th><td>${name}</td><td><code>${JSON.stringify(s.value)}</code></td><td>${named(s.by, view.names)}</td><td>${utcTime(s.at)}</td></tr>`,
        ),
      )}</tbody></table></section>`
}`;
  return page('/settings', context, main);
}

function settingTable(caption: string, rows: SettingRow[]): SafeHtml {
  return html`<table><caption>${caption}</caption>
<thead><tr><th scope="col">Setting</th><th scope="col">In force</th><th scope="col">From</th></tr></thead>
<tbody>${rows.map((r) => html`<tr><th scope="row">${r.name}</th><td>${r.value}</td><td>${r.source}</td></tr>`)}</tbody></table>`;
}
