import { describeDuration } from '../../core/describe-duration.js';
import { html, type SafeHtml } from '../html.js';
import type { AlertLogEntry } from '../alerts/alert-log.js';
import { page, utcTime, type PageContext } from './layout.js';

export interface AlertsView {
  thresholds: number[];
  breaker: boolean;
  /** Who chose these rules in the console, and when; undefined: the environment's (PICTOR_ALERT_THRESHOLDS, PICTOR_ALERT_BREAKER). */
  chosen: { by: string; at: number } | undefined;
  /** The destinations, never with a secret: "discord:<channel>", "slack:<channel>", "webhook:<origin>". */
  channels: string[];
  /** How often the caps are looked at (PICTOR_ALERT_CHECK_SECONDS). */
  checkMs: number;
  recent: AlertLogEntry[];
}

/** Alerts: the rules, where they go, and the last ones sent. */
export function alertsPage(context: PageContext, view: AlertsView): SafeHtml {
  const main = html`
<section aria-labelledby="rules-h">
<h2 id="rules-h">Rules</h2>
<p>An alert goes out when a cap passes ${view.thresholds.map((t) => `${t} %`).join(', ')} of its amount (once per cap, amount, period and threshold; a jump past several sends only the highest)${view.breaker ? ', and when the breaker pauses a server, workspace or DM user' : ''}. The caps are looked at every ${describeDuration(view.checkMs)}, and at once when the breaker trips.</p>
<p>${view.chosen ? html`Chosen in the console, ${utcTime(view.chosen.at)} (they replace PICTOR_ALERT_THRESHOLDS and PICTOR_ALERT_BREAKER).` : 'From the environment (PICTOR_ALERT_THRESHOLDS, PICTOR_ALERT_BREAKER).'}</p>
${
  context.allowChanges
    ? html`<form method="post" action="/alerts/rules" class="rules">
<input type="hidden" name="_csrf" value="${context.csrf}">
<label for="thresholds">Thresholds, in % of a cap (comma-separated)</label>
<input id="thresholds" name="thresholds" value="${view.thresholds.join(', ')}" required pattern="[0-9 ,%]+" aria-describedby="thresholds-hint">
<p id="thresholds-hint" class="hint">Whole numbers from 1 to 1000, at most 10.</p>
<label><input type="checkbox" name="breaker" value="1"${view.breaker ? html` checked` : ''}> Alert when the breaker pauses a server</label>
<button type="submit">Save the rules</button>
</form>`
    : html`<p class="hint">Read-only: set PICTOR_CONSOLE_ALLOW_CHANGES=1 to change the rules here.</p>`
}
</section>

<section aria-labelledby="where-h">
<h2 id="where-h">Where they go</h2>
${
  view.channels.length === 0
    ? html`<p>Nowhere yet: set PICTOR_ALERT_DISCORD_CHANNEL, PICTOR_ALERT_SLACK_CHANNEL or PICTOR_ALERT_WEBHOOK_URL (with PICTOR_ALERT_WEBHOOK_SECRET); see docs/console.md.</p>`
    : html`<ul>${view.channels.map((c) => html`<li><code>${c}</code></li>`)}</ul>`
}
</section>

<section aria-labelledby="sent-h">
<h2 id="sent-h">Sent lately</h2>
${
  view.recent.length === 0
    ? html`<p>No alert has gone out.</p>`
    : html`<table><caption>The last alerts sent, newest first.</caption>
<thead><tr><th scope="col">When</th><th scope="col">Where</th><th scope="col">Alert</th></tr></thead>
<tbody>${view.recent.map((a) => html`<tr data-alert="${a.id}"><td>${utcTime(a.at)}</td><td><code>${a.channel}</code></td><td>${a.text}</td></tr>`)}</tbody></table>`
}
</section>`;
  return page('/alerts', context, main);
}
