import { describeAge } from '../../processors/waiting.js';
import { html, type Html } from './html.js';
import { lineChart } from './plot.js';
import type { ReportsData } from '../../activity/reports-data.js';


/** What the dead-letter page shows above its list besides the waiting records (src/daemon/serve.ts reads it). */

/** PURE: silence warnings, the two plots, the largest tax variances. */
export function reportsView(data: ReportsData): Html {
  const silent = data.sources.filter((s) => s.silent);
  const warning =
    silent.length === 0
      ? ''
      : html`<p class="notice error" role="alert">${silent.map(
          (s) => html`<strong>${s.source}</strong> has sent nothing for ${describeAge(s.age_s)} (last event ${s.last_event_at}). `,
        )}Check the platform's webhook settings and delivery log; after an outage run <code>taxsync backfill</code> or <code>taxsync reconcile</code>.</p>`;
  const variances =
    data.variances.total === 0
      ? html`<p>No invoice where the tax charged differs from the engine's.</p>`
      : html`<table><thead><tr><th>record</th><th>charged</th><th>computed</th><th>difference</th><th>share</th><th>since</th></tr></thead><tbody>${data.variances.entries.map(
          (e) => html`<tr><td>${e.record.source}/${e.record.external_id}</td><td>${e.charged} ${e.currency}</td><td>${e.computed}</td><td>${e.difference}</td><td>${e.percent === null ? '-' : `${e.percent}%`}</td><td>${e.at}</td></tr>`,
        )}</tbody></table>${data.variances.total > data.variances.entries.length ? html`<p>… and ${data.variances.total - data.variances.entries.length} more (taxsync variance)</p>` : ''}`;
  return html`<section class="reports">${warning}
<h2>Activity</h2>${lineChart(data.events)}${lineChart(data.deadLetters)}
<h2>Tax variances (${data.variances.total})</h2>${variances}</section>`;
}
