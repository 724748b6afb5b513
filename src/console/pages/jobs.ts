import { describeElapsed } from '../../core/describe-duration.js';
import { formatUsd } from '../../core/pricing.js';
import type { ActiveJob, UsageRecord } from '../../spend/types.js';
import { html, type SafeHtml } from '../html.js';
import { page, utcTime, type PageContext } from './layout.js';

/** Which jobs the jobs page lists (its query string). */
export interface JobFilter {
  surface?: string | undefined;
  scope?: string | undefined;
  user?: string | undefined;
  outcome?: string | undefined;
}

export const OUTCOMES = ['completed', 'failed', 'cancelled', 'interrupted'] as const;
export const SURFACES = ['discord', 'slack', 'cli', 'n8n'] as const;

/** The filter of a query string: known words only, keys as given (they are compared, never run). */
export function filterOf(query: URLSearchParams): JobFilter {
  const text = (name: string) => {
    const value = query.get(name)?.trim();
    return value ? value.slice(0, 200) : undefined;
  };
  const surface = text('surface');
  const outcome = text('outcome');
  return {
    surface: (SURFACES as readonly string[]).includes(surface ?? '') ? surface : undefined,
    scope: text('scope'),
    user: text('user'),
    outcome: (OUTCOMES as readonly string[]).includes(outcome ?? '') ? outcome : undefined,
  };
}

export function matchesFilter(filter: JobFilter, job: { surface?: string; scopeKey: string; userKey: string; outcome?: string | undefined }): boolean {
  if (filter.surface && (job.surface ?? job.userKey.split(':')[0]) !== filter.surface) return false;
  if (filter.scope && job.scopeKey !== filter.scope) return false;
  if (filter.user && job.userKey !== filter.user) return false;
  if (filter.outcome && job.outcome !== filter.outcome) return false;
  return true;
}

/** A finished job as a row: what the page renders and what the live updates send (the browser writes it as text). */
export interface JobRow {
  jobId: string;
  when: string;
  who: string;
  where: string;
  what: string;
  cost: string;
  duration: string;
  outcome: string;
  prompt?: string | undefined;
  /**
   * Its kept images shown (the first `MAX_THUMBS`), by their index in the job's numbering (thumbnails at
   * `/thumbs/<job id>/<index>`); one not kept is left out.
   */
  thumbs: readonly number[];
}

/** A job queued or in flight as a row. */
export interface LiveRow {
  jobId: string;
  since: string;
  who: string;
  where: string;
  what: string;
  reserved: string;
  state: 'queued' | 'in flight';
  process: string;
}

/** Thumbnails shown of one job, at most (the server asks the bots for no more). */
export const MAX_THUMBS = 4;

const nameOf = (key: string, names: ReadonlyMap<string, string>) => {
  const name = names.get(key);
  return name ? `${name} (${key})` : key;
};

function what(job: { operation?: string | undefined; n?: number | undefined; size?: string | undefined; quality?: string | undefined }): string {
  if (!job.operation) return '—';
  return `${job.operation}, ${job.n ?? '?'} × ${job.size ?? 'auto'} ${job.quality ?? 'auto'}`;
}

export function jobRow(record: UsageRecord, names: ReadonlyMap<string, string>, thumbs: readonly number[]): JobRow {
  return {
    jobId: record.jobId,
    when: utcTime(record.time),
    who: nameOf(record.userKey, names),
    where: nameOf(record.scopeKey, names),
    what: what(record),
    cost: `${formatUsd(record.costUsd)}${record.basis === 'table' ? '' : ` (${record.basis})`}`,
    duration: record.reservedAt === undefined ? '—' : describeElapsed(record.time - record.reservedAt),
    outcome: record.outcome ?? 'settled',
    ...(record.prompt !== undefined && { prompt: record.prompt }),
    thumbs: thumbs.slice(0, MAX_THUMBS),
  };
}

export function liveRow(job: ActiveJob, names: ReadonlyMap<string, string>): LiveRow {
  return {
    jobId: job.jobId,
    since: utcTime(job.at),
    who: nameOf(job.userKey, names),
    where: nameOf(job.scopeKey, names),
    what: what(job.job ?? {}),
    reserved: formatUsd(job.usd),
    state: job.sent ? 'in flight' : 'queued',
    process: job.owner.split(':').slice(0, 2).join(':'),
  };
}

/** The jobs page: what runs now (updated live) and the last jobs settled, with filters. */
export function jobsPage(context: PageContext, filter: JobFilter, live: LiveRow[], recent: JobRow[], promptsKept: boolean): SafeHtml {
  const query = new URLSearchParams(Object.entries(filter).filter((e): e is [string, string] => e[1] !== undefined)).toString();
  const main = html`
<form class="filters" method="get" action="/jobs" aria-label="Filter the jobs">
<label>Surface <select name="surface"><option value="">all</option>${SURFACES.map((s) => html`<option value="${s}"${filter.surface === s ? html` selected` : ''}>${s}</option>`)}</select></label>
<label>Where (scope key) <input name="scope" value="${filter.scope ?? ''}" placeholder="discord:123…" size="22"></label>
<label>Who (user key) <input name="user" value="${filter.user ?? ''}" placeholder="slack:U123…" size="22"></label>
<label>Outcome <select name="outcome"><option value="">all</option>${OUTCOMES.map((o) => html`<option value="${o}"${filter.outcome === o ? html` selected` : ''}>${o}</option>`)}</select></label>
<button type="submit">Filter</button> ${query ? html`<a href="/jobs">Show all</a>` : ''}
</form>

<section aria-labelledby="live-h" id="live" data-events="/events/jobs${query ? `?${query}` : ''}">
<h2 id="live-h">Queued and in flight</h2>
<p class="hint" id="live-status" role="status" aria-live="polite">Every process sharing the ledger, as it reserved them; updated as they change.</p>
<table><caption>Jobs that reserved their upper-bound price and have not ended, oldest first.</caption>
<thead><tr><th scope="col">Since</th><th scope="col">Who</th><th scope="col">Where</th><th scope="col">What</th><th scope="col">Reserved</th><th scope="col">State</th><th scope="col">Process</th></tr></thead>
<tbody id="live-jobs">${live.length === 0 ? emptyLive() : live.map(liveRowHtml)}</tbody></table>
</section>

<section aria-labelledby="recent-h">
<h2 id="recent-h">Recent jobs</h2>
<p class="hint">Jobs that were charged, newest first (a job that ended without costing anything is not listed). ${promptsKept ? '' : 'Prompts are shown where the usage records keep them (PICTOR_USAGE_PROMPTS=1).'}</p>
<table class="jobs"><caption>The last jobs settled${query ? ' that match the filter' : ''} (at most 100).</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Where</th><th scope="col">What</th><th scope="col">Cost</th><th scope="col">Took</th><th scope="col">Outcome</th><th scope="col">Prompt</th><th scope="col">Images</th></tr></thead>
<tbody id="recent-jobs">${recent.length === 0 ? html`<tr class="empty"><td colspan="9">No job yet.</td></tr>` : recent.map(jobRowHtml)}</tbody></table>
</section>`;
  return page('/jobs', context, main);
}

function emptyLive(): SafeHtml {
  return html`<tr class="empty"><td colspan="7">Nothing queued or running.</td></tr>`;
}

function liveRowHtml(row: LiveRow): SafeHtml {
  return html`<tr data-job="${row.jobId}"><td>${row.since}</td><td>${row.who}</td><td>${row.where}</td><td>${row.what}</td><td>${row.reserved}</td><td>${row.state}</td><td><code>${row.process}</code></td></tr>`;
}

export function jobRowHtml(row: JobRow): SafeHtml {
  // Each named by its number in the job (as Discord's Edit buttons): one not kept is left out, never drawn.
  const thumbs = row.thumbs.map(
    (i) =>
      html`<a href="/thumbs/${encodeURIComponent(row.jobId)}/${i}?full=1"><img src="/thumbs/${encodeURIComponent(row.jobId)}/${i}" alt="Image ${i + 1} of the job of ${row.when}" width="64" height="64" loading="lazy"></a>`,
  );
  return html`<tr data-job="${row.jobId}"><td>${row.when}</td><td>${row.who}</td><td>${row.where}</td><td>${row.what}</td><td>${row.cost}</td><td>${row.duration}</td><td>${row.outcome}</td><td class="prompt">${row.prompt ?? ''}</td><td>${thumbs.length ? thumbs : '—'}</td></tr>`;
}
