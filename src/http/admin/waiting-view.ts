import { describeAge, type WaitingList } from '../../processors/waiting.js';
import { html, type Html } from './html.js';

/**
 * The records waiting for what they need, oldest first: a refund waiting for its original is
 * dead-lettered as REFUND_ORIGINAL_MISSING once TAXSYNC_REFUND_WAIT has passed, so it shows here
 * from its first wait, not only as a dead letter.
 */
export function waitingView(waiting: WaitingList): Html {
  if (waiting.total === 0) return html`<section class="waiting"><h2>Waiting</h2><p>No record is waiting for its original or its customer.</p></section>`;
  const more = waiting.total - waiting.records.length;
  return html`<section class="waiting"><h2>Waiting (${waiting.total})</h2>
<p>Records that wait for a record the tax engine does not have yet. A refund is dead-lettered as REFUND_ORIGINAL_MISSING after TAXSYNC_REFUND_WAIT; send its original to taxsync to let it go on.</p>
<table><thead><tr><th>record</th><th>waits for</th><th>waiting for</th><th>since</th></tr></thead>
<tbody>${waiting.records.map(
    (w) => html`<tr><td>${w.record.kind} ${w.record.source}/${w.record.external_id}</td>
<td>${w.waiting_for === null ? w.reason : `${w.waiting_for.what} ${w.waiting_for.record.source}/${w.waiting_for.record.external_id}`}</td>
<td>${describeAge(w.age_s)}</td><td>${w.since}</td></tr>`,
  )}</tbody></table>${more > 0 ? html`<p>… and ${more} more (taxsync status --json)</p>` : ''}</section>`;
}
