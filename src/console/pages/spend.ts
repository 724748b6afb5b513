import { describeReset } from '../../core/describe-duration.js';
import type { CapsShown, CapUse, PeriodUse, Row, SpendFigures, UserRow } from '../figures.js';
import { html, jsonInScript, type SafeHtml } from '../html.js';
import { count, page, percent, usd, type PageContext } from './layout.js';

/** A key with the name the bots know for it: "Design team (discord:123)". */
export function named(key: string, names: ReadonlyMap<string, string>): SafeHtml {
  const name = names.get(key);
  return name ? html`<span class="name">${name}</span> <code>${key}</code>` : html`<code>${key}</code>`;
}

const OWNER_WORDS: Record<CapUse['owner'], string> = { account: 'The whole account', scope: 'Server / workspace', dm: 'DM user', user: 'User' };

/** The spend page: today and this month against every cap, by surface, server and user, the chart, refusals and images per hour. */
export function spendPage(context: PageContext, f: SpendFigures, names: ReadonlyMap<string, string>, chartDays: number, shown?: CapsShown): SafeHtml {
  const main = html`
<section aria-labelledby="now-h">
<h2 id="now-h">Today and this month</h2>
<div class="cards">
${periodCard('Today', f.today, f.account.day, 'account-day', f.damagedUsageLines.day, true)}
${periodCard('This month', f.month, f.account.month, 'account-month', f.damagedUsageLines.month)}
</div>
</section>

<section aria-labelledby="caps-h">
<h2 id="caps-h">Against the caps</h2>
${
  f.caps.length === 0 && !shown?.key
    ? html`<p>No cap is set. The operator’s caps are the <code>PICTOR_*_USD</code> variables (see Caps and settings); chat admins may lower their server’s.</p>`
    : html`<table class="caps">
<caption>Every cap that applies, fullest first. Used is the ledger’s figure: what was settled and what running jobs reserved, as the cap counts it when a job is reserved.</caption>
<thead><tr><th scope="col">Whose</th><th scope="col">Period</th><th scope="col">Used</th><th scope="col">Cap</th><th scope="col">Share</th><th scope="col">Resets</th><th scope="col">Set by</th></tr></thead>
<tbody>
${f.caps.map(
  (c) => html`<tr data-cap="${c.owner}:${c.key}${c.scopeKey === undefined ? '' : `@${c.scopeKey}`}:${c.period}">
<th scope="row">${OWNER_WORDS[c.owner]}${c.owner === 'account' ? '' : html`<br>${named(c.key, names)}`}${c.scopeKey === undefined ? '' : html`<br>in ${named(c.scopeKey, names)}`}</th>
<td>${c.period === 'day' ? 'today' : 'this month'}</td>
<td>${usd(c.usedUsd, `cap-used:${c.owner}:${c.key}${c.scopeKey === undefined ? '' : `@${c.scopeKey}`}:${c.period}`)}</td>
<td>${c.bound === 'lower' ? html`at least ${usd(c.limitUsd)}` : usd(c.limitUsd)}</td>
<td class="share"><meter min="0" max="1" low="0.5" high="0.8" optimum="0" value="${Math.min(1, c.ratio)}" aria-label="${c.bound === 'lower' ? 'at most ' : ''}${percent(c.ratio)} of the cap">${percent(c.ratio)}</meter> ${c.bound === 'lower' ? `at most ${percent(c.ratio)}, if the member holds no role with a larger budget` : percent(c.ratio)}</td>
<td>${describeReset(c.resetsAt, f.now)}</td>
<td>${c.source}</td>
</tr>`,
)}
</tbody></table>
${capsFinder(shown, chartDays)}`
}
</section>

<section aria-labelledby="surface-h">
<h2 id="surface-h">By surface</h2>
${totalsTable('Settled today and this month on each surface.', 'Surface', mergeDayMonth(f.bySurface.day, f.bySurface.month), names, 'surface')}
</section>

<section aria-labelledby="chart-h">
<h2 id="chart-h">The last ${chartDays} days</h2>
<p class="switch">${chartDays === 30 ? html`<strong>30 days</strong> · <a href="/spend?days=90">90 days</a>` : html`<a href="/spend?days=30">30 days</a> · <strong>90 days</strong>`}</p>
<figure>
<div class="chart-box"><canvas id="spend-chart" class="chart" role="img" aria-label="Settled spend per UTC day over the last ${chartDays} days, stacked by surface; the table below has the same figures"></canvas></div>
<figcaption>Settled per UTC day (the day each job was reserved), stacked by surface.</figcaption>
</figure>
<details><summary>The chart as a table</summary>
<table><thead><tr><th scope="col">Day</th>${f.chart.surfaces.map((s) => html`<th scope="col">${s.surface}</th>`)}</tr></thead>
<tbody>${f.chart.days
    .map((day, i) => ({ day, i }))
    .filter(({ i }) => f.chart.surfaces.some((s) => s.usd[i]! > 0))
    .map(({ day, i }) => html`<tr><th scope="row">${day}</th>${f.chart.surfaces.map((s) => html`<td>${usd(s.usd[i]!)}</td>`)}</tr>`)}</tbody></table>
</details>
</section>

<section aria-labelledby="scope-h">
<h2 id="scope-h">By server, workspace and DM user, this month</h2>
${f.byScope.length === 0 ? html`<p>Nothing settled this month.</p>` : totalsTable('Settled this month in each scope (the CLI and n8n each count as one).', 'Where', f.byScope.map((r) => ({ month: r })), names, 'scope')}
</section>

<section aria-labelledby="user-h">
<h2 id="user-h">By user, this month</h2>
${f.byUser.length === 0 ? html`<p>Nothing settled this month.</p>` : usersTable(f.byUser, names)}
</section>

<section aria-labelledby="refusals-h">
<h2 id="refusals-h">Refusals</h2>
${
  f.refusals.length === 0
    ? html`<p>No job was refused this month.</p>`
    : html`<table><caption>Jobs refused before anything was sent, by the rule that refused them.</caption>
<thead><tr><th scope="col">Code</th><th scope="col">Today</th><th scope="col">This month</th></tr></thead>
<tbody>${f.refusals.map((r) => html`<tr><th scope="row"><code>${r.code}</code></th><td>${count(r.day, `refusals-day:${r.code}`)}</td><td>${count(r.month, `refusals-month:${r.code}`)}</td></tr>`)}</tbody></table>`
}
</section>

<section aria-labelledby="ipm-h">
<h2 id="ipm-h">Images per hour</h2>
<figure>
<div class="chart-box"><canvas id="images-chart" class="chart" role="img" aria-label="Images asked for per hour over the last 48 hours${f.imagesPerHour.limitPerHour === undefined ? '' : `, against the account’s limit of ${f.imagesPerHour.limitPerHour} an hour`}"></canvas></div>
<figcaption>Images asked for by the jobs settled in each hour (UTC)${
    f.imagesPerHour.limitPerHour === undefined
      ? '; set PICTOR_IMAGES_PER_MINUTE to draw the account’s limit.'
      : html`, against the account’s limit: ${count(f.imagesPerHour.limitPerHour, 'images-limit-per-hour')} an hour (PICTOR_IMAGES_PER_MINUTE × 60).`
  } Busiest hour: ${count(Math.max(0, ...f.imagesPerHour.images), 'images-peak-hour')}.</figcaption>
</figure>
</section>
<script type="application/json" id="chart-data">${jsonInScript({ spend: f.chart, images: f.imagesPerHour })}</script>
`;
  return page('/spend', context, main, { charts: true });
}

/** The account's period: the amounts are the ledger's (the figure its cap rows show); jobs and images the usage records'. */
/** `damagedLines`: lines of the usage records damaged and skipped that may be of the period, which (rather than retention) explain records adding up to less. */
/** `oneDay`: the card of a day, none of whose records retention drops (it keeps at least a day): what is missing was removed or lost. */
function periodCard(title: string, period: string, use: PeriodUse, figure: string, damagedLines: number, oneDay = false): SafeHtml {
  const recordsDiffer = Math.abs(use.recordsUsd - use.settledUsd) >= 0.000_001;
  return html`<div class="card" data-period="${period}">
<h3>${title} <small>(${period})</small></h3>
<p class="big">${usd(use.settledUsd, `${figure}-settled`)} <span>settled</span></p>
<dl>
<dt>Reserved by running jobs</dt><dd>${usd(use.reservedUsd, `${figure}-reserved`)}</dd>
<dt>Counted by the caps</dt><dd>${usd(use.usedUsd, `${figure}-used`)}</dd>
<dt>Jobs</dt><dd>${count(use.jobs, `${figure}-jobs`)}</dd>
<dt>Images</dt><dd>${count(use.images, `${figure}-images`)}</dd>
${use.uncertainUsd > 0 ? html`<dt>Of it uncertain</dt><dd>${usd(use.uncertainUsd, `${figure}-uncertain`)}</dd>` : ''}
</dl>
<p class="source">Amounts: the ledger, as the caps count them. Jobs and images: the usage records kept.${
    recordsDiffer
      ? html` <span class="differs">The usage records kept add up to ${usd(use.recordsUsd, `${figure}-records`)}: ${
          damagedLines > 0
            ? html`${damagedLines === 1 ? '1 damaged line' : `${damagedLines} damaged lines`} of the usage records (<code>usage/</code>) ${damagedLines === 1 ? 'was' : 'were'} skipped (the ledger still counts what ${damagedLines === 1 ? 'it' : 'they'} recorded)`
            : oneDay
              ? html`some of the day’s records are missing from <code>usage/</code> (removed or lost: <code>PICTOR_USAGE_RETENTION_DAYS</code> drops none of them yet), while the ledger keeps the day’s amounts`
              : html`records older than <code>PICTOR_USAGE_RETENTION_DAYS</code> are dropped, or some are missing from <code>usage/</code> (removed or lost), while the ledger keeps the month’s amounts`
        }, so jobs and images count fewer than were settled.</span>`
      : ''
  }</p>
</div>`;
}

/** The users who spent most this month: the amount the ledger settled under their key, jobs and images from their records. */
function usersTable(rows: readonly UserRow[], names: ReadonlyMap<string, string>): SafeHtml {
  const ledgerOnly = rows.some((r) => r.ledgerOnly);
  return html`<table><caption>The users who spent most this month (at most 50): settled, as their caps count it (the ledger); jobs and images from the usage records kept.${
    ledgerOnly
      ? ' A user marked “no usage record kept” has spend in the ledger and no record left (dropped after PICTOR_USAGE_RETENTION_DAYS): what they did is not known. The ledger keeps amounts by key, not whose: a server or workspace with no record left this month would be listed as one of them.'
      : ''
  }</caption>
<thead><tr><th scope="col">Who</th><th scope="col">This month</th><th scope="col">Jobs</th><th scope="col">Images</th></tr></thead>
<tbody>${rows.map(
    (r) =>
      html`<tr data-user="${r.key}"><th scope="row">${named(r.key, names)}</th><td>${usd(r.usd, `user-month:${r.key}`)}</td>${
        r.ledgerOnly
          ? html`<td colspan="2">no usage record kept</td>`
          : html`<td>${count(r.jobs, `user-jobs:${r.key}`)}</td><td>${count(r.images)}</td>`
      }</tr>`,
  )}</tbody></table>`;
}

function mergeDayMonth(day: Row[], month: Row[]): { day?: Row; month?: Row }[] {
  const keys = [...new Set([...month.map((r) => r.key), ...day.map((r) => r.key)])];
  return keys.map((key) => ({ day: day.find((r) => r.key === key), month: month.find((r) => r.key === key) }));
}

function totalsTable(caption: string, what: string, rows: { day?: Row | undefined; month?: Row | undefined }[], names: ReadonlyMap<string, string>, figure: string): SafeHtml {
  const withDay = rows.some((r) => r.day !== undefined);
  return html`<table><caption>${caption}</caption>
<thead><tr><th scope="col">${what}</th>${withDay ? html`<th scope="col">Today</th>` : ''}<th scope="col">This month</th><th scope="col">Jobs</th><th scope="col">Images</th></tr></thead>
<tbody>${rows.map((r) => {
    const key = (r.month ?? r.day)!.key;
    return html`<tr><th scope="row">${figure === 'surface' ? key : named(key, names)}</th>${withDay ? html`<td>${usd(r.day?.usd ?? 0, `${figure}-day:${key}`)}</td>` : ''}<td>${usd(r.month?.usd ?? 0, `${figure}-month:${key}`)}</td><td>${count(r.month?.jobs ?? 0, `${figure}-jobs:${key}`)}</td><td>${count(r.month?.images ?? 0)}</td></tr>`;
  })}</tbody></table>`;
}

/**
 * Under the caps: how many members' and DM users' rows are not shown, and a search by key through them (`?cap=`, kept
 * in the search box, never quoted in the sentence).
 */
function capsFinder(shown: CapsShown | undefined, chartDays: number): SafeHtml | string {
  if (!shown || (shown.hidden === 0 && shown.key === undefined)) return '';
  const said =
    shown.key === undefined
      ? html`${count(shown.hidden)} more rows of members and DM users are not shown: these are the fullest.`
      : // The search is shown in its box only: words from the address never read as the console's own sentence.
        html`Members and DM users whose key contains the text searched for below, the fullest first${shown.hidden > 0 ? html`; ${count(shown.hidden)} other rows are not shown` : ''}. <a href="/spend${chartDays === 90 ? '?days=90' : ''}">Show the fullest of all</a>.`;
  return html`<p class="more" data-caps-hidden="${String(shown.hidden)}">${said}</p>
<form method="get" action="/spend" class="find">
${chartDays === 90 ? html`<input type="hidden" name="days" value="90">` : ''}<label for="cap-key">Find a user, DM user or server by key</label>
<input id="cap-key" name="cap" type="search" value="${shown.key ?? ''}" maxlength="200">
<button type="submit">Find</button>
</form>`;
}
