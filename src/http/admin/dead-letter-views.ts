import { ERROR_CODES } from '../../domain/errors.js';
import type { DeadLetterEntry } from '../../queue/dead-letter.js';
import type { ReplaySummary } from '../../dead-letters/service.js';
import type { Connections } from '../../config/connections.js';
import { describeTally, entryConnection, entrySubject, tally } from '../../dead-letters/filter.js';
import { html, type Html } from './html.js';

export const FILTER_FIELDS = ['queue', 'code', 'source', 'connection', 'external_id', 'text', 'since', 'until'] as const;
export type FilterFields = Partial<Record<(typeof FILTER_FIELDS)[number], string>>;
export type Action = 'replay' | 'discard';

const BASE = '/admin/dead-letters';

export function query(params: Record<string, string | number | readonly string[] | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    for (const one of Array.isArray(value) ? (value as readonly string[]) : value === undefined ? [] : [String(value)]) search.append(key, one);
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

function pretty(json: unknown): string {
  return JSON.stringify(json, null, 2);
}

/** A body as received: pretty when it is JSON. */
function body(text: string | undefined): Html {
  if (text === undefined || text === '') return html`<p>(no body)</p>`;
  try {
    return html`<pre>${pretty(JSON.parse(text))}</pre>`;
  } catch {
    return html`<pre>${text}</pre>`;
  }
}

function filterForm(fields: FilterFields): Html {
  const input = (name: (typeof FILTER_FIELDS)[number], label: string, placeholder = '') =>
    html`<label>${label}<input name="${name}" value="${fields[name] ?? ''}" placeholder="${placeholder}"></label>`;
  return html`<form class="filters" method="get" action="${BASE}">
  ${input('queue', 'queue', 'transactions')}${input('code', 'code', 'API_INVALID')}${input('source', 'source', 'shopify')}${input('connection', 'connection', 'shop-fr')}
  ${input('external_id', 'external id')}${input('text', 'text')}
  ${input('since', 'since', '2026-11-21')}${input('until', 'until', '2026-11-21T12:00:00Z')}
  <button>Filter</button> <a href="${BASE}">clear</a>
</form>`;
}

/** The connection an entry is shown under; '-' when none is known (connections undefined: the connector it names). */
const connectionCell = (e: DeadLetterEntry, connections: Connections | undefined): string => entryConnection(e, connections) ?? '-';

export function listView(options: {
  fields: FilterFields;
  entries: readonly DeadLetterEntry[];
  total: number;
  offset: number;
  limit: number;
  summary: string;
  error?: string;
  connections?: Connections;
}): Html {
  const { fields, entries, total, offset, limit } = options;
  const rows = entries.map(
    (e) => html`<tr>
  <td>${e.last_failed_at}</td><td>${e.queue}</td><td>${connectionCell(e, options.connections)}</td><td><a href="${BASE}/entries/${encodeURIComponent(e.id)}">${entrySubject(e)}</a></td>
  <td>${e.error.code}</td><td>${e.error.message.slice(0, 160)}</td><td>${e.attempts}</td>
</tr>`,
  );
  const paging = html`<p>
  ${offset > 0 ? html`<a href="${BASE}${query({ ...fields, offset: Math.max(0, offset - limit) })}">← newer</a>` : ''}
  ${offset + limit < total ? html`<a href="${BASE}${query({ ...fields, offset: offset + limit })}">older →</a>` : ''}
</p>`;
  return html`${filterForm(fields)}
${options.error === undefined ? '' : html`<p class="error">${options.error}</p>`}
<p>${options.summary}${total > 0 ? html`; showing ${offset + 1}–${offset + entries.length}, newest first` : ''}</p>
${total > 0
  ? html`<p><a href="${BASE}/replay${query(Object.keys(fields).length > 0 ? fields : { all: '1' })}">Replay these ${total}…</a>${Object.keys(fields).length > 0 ? html` · <a href="${BASE}/discard${query(fields)}">Discard these ${total}…</a>` : ''}</p>
<table><thead><tr><th>last failed</th><th>queue</th><th>connection</th><th>record / delivery</th><th>code</th><th>message</th><th>attempts</th></tr></thead>
<tbody>${rows}</tbody></table>${paging}`
  : ''}`;
}

export function entryView(e: DeadLetterEntry, connections?: Connections): Html {
  const fieldErrors = Object.entries(e.error.fields ?? {});
  return html`<dl>
  <dt>id</dt><dd>${e.id}</dd>
  <dt>queue</dt><dd>${e.queue}</dd>
  <dt>connection</dt><dd>${connectionCell(e, connections)}</dd>
  <dt>record / delivery</dt><dd>${entrySubject(e)}</dd>
  <dt>error</dt><dd>${e.error.code} (${e.error.retryable ? 'retryable' : 'not retryable'}): ${e.error.message}</dd>
  <dt>attempts</dt><dd>${e.attempts}</dd>
  <dt>first failed</dt><dd>${e.first_failed_at}</dd>
  <dt>last failed</dt><dd>${e.last_failed_at}</dd>
  ${e.edited ? html`<dt>edited</dt><dd>${e.edited.count}× (last ${e.edited.at} by ${e.edited.actor})</dd>` : ''}
</dl>
<p>
  <a href="${BASE}/replay${query({ id: e.id })}">Replay…</a> ·
  <a href="${BASE}/discard${query({ id: e.id })}">Discard…</a>
</p>
${fieldErrors.length > 0
  ? html`<h2>Field errors</h2><table><thead><tr><th>field</th><th>errors</th></tr></thead>
<tbody>${fieldErrors.map(([field, messages]) => html`<tr><td>${field}</td><td>${messages.join('; ')}</td></tr>`)}</tbody></table>`
  : ''}
${e.http
  ? html`<h2>Last HTTP exchange</h2>
<p>${e.http.request.method} ${e.http.request.url}</p>${body(e.http.request.body)}
${e.http.response ? html`<p>answered ${e.http.response.status}</p>${body(e.http.response.body)}` : html`<p>no answer</p>`}`
  : ''}
${e.event === null || e.event === undefined ? '' : html`<h2>Event</h2><pre>${pretty(e.event)}</pre>`}
${e.raw
  ? html`<h2>Delivery as received</h2><p>${e.raw.connector} ${e.raw.topic ?? ''} ${e.raw.delivery_id ?? ''}, received ${e.raw.received_at}${e.raw.body_truncated ? ' (body truncated)' : ''}</p>${body(e.raw.body)}`
  : ''}`;
}

const SHOWN = 100;

/** `transient 2, invalid 1`: the classes of docs/errors.md, so a plan says what kind of failures it acts on. */
function byClass(entries: readonly DeadLetterEntry[]): string {
  const counts = new Map<string, number>();
  for (const e of entries) {
    const errorClass = Object.hasOwn(ERROR_CODES, e.error.code) ? ERROR_CODES[e.error.code as keyof typeof ERROR_CODES].errorClass : 'unknown';
    counts.set(errorClass, (counts.get(errorClass) ?? 0) + 1);
  }
  return [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, n]) => `${c} ${n}`).join(', ');
}

export function confirmView(options: { action: Action; entries: readonly DeadLetterEntry[]; missing: readonly string[]; fields: FilterFields; csrf?: string }): Html {
  const { action, entries } = options;
  const verb = action === 'replay' ? 'Replay' : 'Discard';
  if (entries.length === 0) return html`<p>Nothing to ${action}${options.missing.length > 0 ? html`: ${options.missing.join(', ')} no longer in the queue` : ''}.</p><p><a href="${BASE}">back</a></p>`;
  return html`<p>${verb} ${describeTally(tally(entries))}?</p>
<p>By error class: ${byClass(entries)}.</p>
${action === 'replay'
  ? html`<p>A replay queues the record again through the same rules as a webhook: a newer event wins, a confirmed VAT submission is never sent twice.</p>`
  : html`<p class="notice">A discarded entry is gone; only the audit log remembers it.</p>`}
<ul>${entries.slice(0, SHOWN).map((e) => html`<li>${entrySubject(e)} · ${e.error.code} · ${e.last_failed_at}</li>`)}</ul>
${entries.length > SHOWN ? html`<p>… and ${entries.length - SHOWN} more</p>` : ''}
<form method="post" action="${BASE}/${action}">
  ${options.csrf === undefined ? '' : html`<input type="hidden" name="csrf" value="${options.csrf}">`}
  ${entries.map((e) => html`<input type="hidden" name="id" value="${e.id}">`)}
  ${FILTER_FIELDS.map((name) => (options.fields[name] === undefined ? '' : html`<input type="hidden" name="${name}" value="${options.fields[name]}">`))}
  <button>${verb} ${entries.length === 1 ? '1 entry' : `${entries.length} entries`}</button> <a href="${BASE}">cancel</a>
</form>`;
}

export function replayResultView(summary: ReplaySummary, missing: readonly string[]): Html {
  const counts = Object.entries(summary.counts).filter(([, n]) => n > 0);
  return html`<p>${counts.length === 0 ? 'Nothing done' : counts.map(([outcome, n]) => `${n} ${outcome}`).join(', ')}${missing.length > 0 ? html`; gone before the replay: ${missing.join(', ')}` : ''}.</p>
<table><thead><tr><th>entry</th><th>outcome</th><th>detail</th></tr></thead>
<tbody>${summary.results.map((r) => html`<tr><td>${r.id}</td><td class="outcome">${r.outcome}</td><td>${r.detail}</td></tr>`)}</tbody></table>
<p><a href="${BASE}">back to the dead letters</a></p>`;
}

export function discardResultView(discarded: number, missing: readonly string[]): Html {
  return html`<p>${discarded} discarded${missing.length > 0 ? html`; already gone: ${missing.join(', ')}` : ''}.</p><p><a href="${BASE}">back to the dead letters</a></p>`;
}
