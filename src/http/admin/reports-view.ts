import { describeAge } from '../../processors/waiting.js';
import { html, type Html } from './html.js';
import { lineChart } from './plot.js';
import type { ReportsData } from '../../activity/reports-data.js';
import { CONNECTION_COLUMNS, connectionCells, type ConnectionAge } from '../../activity/silence.js';

/** What the dead-letter page shows above its list besides the waiting records (src/daemon/serve.ts reads it). */

/** A connection as a person tells it apart from another shop of the same source: its platform, source and prefix. */
const described = (c: ConnectionAge) => [c.platform, `source ${c.source}`, c.prefix === undefined ? undefined : `prefix ${c.prefix}`].filter((p) => p !== undefined).join(', ');

/** One row per connection: the one that went quiet is told apart from its shop's sibling that still sends. */
function connectionsTable(data: ReportsData): Html {
  if (data.connections.length === 0) return html`<p>No connection has sent an event yet.</p>`;
  const cell = (text: string) => (text === 'SILENT' ? html`<td><strong>SILENT</strong></td>` : html`<td>${text}</td>`);
  return html`<table><thead><tr>${CONNECTION_COLUMNS.map((column) => html`<th>${column}</th>`)}</tr></thead><tbody>${data.connections.map(
    (c) => html`<tr>${connectionCells(c, describeAge).map(cell)}</tr>`,
  )}</tbody></table><p>Silent: no event for more than ${describeAge(data.silenceS)} (TAXSYNC_SOURCE_SILENCE).</p>`;
}

/** PURE: silence warnings, the connections' last events, the two plots, the largest tax variances. */
export function reportsView(data: ReportsData): Html {
  const silent = data.connections.filter((c) => c.silent);
  const warning =
    silent.length === 0
      ? ''
      : html`<p class="notice error" role="alert">${silent.map(
          (c) => html`<strong>${c.id}</strong> (${described(c)}) has sent nothing for ${describeAge(c.age_s ?? 0)} (last event ${c.last_event_at}). `,
        )}Check the platform's webhook settings and delivery log; after an outage run <code>taxsync backfill</code> or <code>taxsync reconcile</code>.</p>`;
  const variances =
    data.variances.total === 0
      ? html`<p>No invoice where the tax charged differs from the engine's.</p>`
      : html`<table><thead><tr><th>record</th><th>charged</th><th>computed</th><th>difference</th><th>share</th><th>since</th></tr></thead><tbody>${data.variances.entries.map(
          (e) => html`<tr><td>${e.record.source}/${e.record.external_id}</td><td>${e.charged} ${e.currency}</td><td>${e.computed}</td><td>${e.difference}</td><td>${e.percent === null ? '-' : `${e.percent}%`}</td><td>${e.at}</td></tr>`,
        )}</tbody></table>${data.variances.total > data.variances.entries.length ? html`<p>… and ${data.variances.total - data.variances.entries.length} more (taxsync variance)</p>` : ''}`;
  return html`<section class="reports">${warning}
<h2>Connections</h2>${connectionsTable(data)}
<h2>Activity</h2>${lineChart(data.events)}${lineChart(data.deadLetters)}
<h2>Tax variances (${data.variances.total})</h2>${variances}</section>`;
}
