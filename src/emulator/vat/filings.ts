import { randomUUID } from 'node:crypto';
import { fixed, ZERO, type Dec } from '../contract/decimal.js';
import { ApproveBody as FilingApproveRequest, FilingBody as FilingCreateRequest, type FilingState as FilingStatus } from '../contract/vat-requests.js';
import { detailAnswer, ok, parseDetailBody, type RecordRef } from '../answer.js';
import { isoNow } from '../clock.js';
import { defineEndpoint, type EmuRequest, type RouteContext } from '../routing.js';
import type { DraftBox, FilingRecord, VatTransactionRecord, EmulatorState } from '../state.js';
import { JURISDICTIONS, VAT_TRANSACTION_TYPES } from './reference-data.js';
import { varyBoxes, varyFiling, varyFilingFile } from '../variety/vat.js';




/** Statuses from which approve succeeds; from any other it answers 409. */
export const APPROVABLE: readonly FilingStatus[] = ['draft', 'pending_approval'];

const filingRef = (id: string): RecordRef => ({ kind: 'filing', key: `filing:${id}`, id });

/**
 * The draft return of a period (docs/emulator.md, "Filings"): VAT transactions of the entity
 * jurisdiction whose reporting_period lies in the filing's period and whose currency is the
 * filing's. Sales types give output VAT; Import Services are reverse-charged (due and reclaimable).
 */
export function computeBoxes(
  transactions: readonly VatTransactionRecord[],
  currency: string,
): { boxes: DraftBox[]; total_vat_due: string; total_net: string } {
  const types = new Map(VAT_TRANSACTION_TYPES.map((t) => [t.id, t]));
  const zero = ZERO;
  let outputVat = zero;
  let reverseVat = zero;
  let salesNet = zero;
  let purchasesNet = zero;
  let intraEuNet = zero;
  for (const t of transactions) {
    const type = types.get(t.transaction_type_id);
    if (type === undefined) continue;
    if (type.direction === 'purchases') {
      reverseVat = reverseVat.plus(t.vat);
      purchasesNet = purchasesNet.plus(t.net);
    } else {
      outputVat = outputVat.plus(t.vat);
      salesNet = salesNet.plus(t.net);
      if (type.intraEu) intraEuNet = intraEuNet.plus(t.net);
    }
  }
  const due = outputVat.plus(reverseVat);
  const payable = due.minus(reverseVat);
  const box = (n: number, description: string, value: Dec): DraftBox => ({ box_number: String(n), description, value: fixed(value, 2), currency });
  return {
    boxes: [
      box(1, 'Output VAT on sales', outputVat),
      box(2, 'VAT due on imported services (reverse charge)', reverseVat),
      box(3, 'Total VAT due (boxes 1 + 2)', due),
      box(4, 'VAT reclaimable on imported services (reverse charge)', reverseVat),
      box(5, 'Net VAT payable (box 3 − box 4)', payable),
      box(6, 'Total net sales', salesNet),
      box(7, 'Total net purchases of imported services', purchasesNet),
      box(8, 'Intra-EU supplies, net', intraEuNet),
      { box_number: '9', description: 'Number of transactions', value: String(transactions.length), currency },
    ],
    total_vat_due: fixed(payable, 2),
    total_net: fixed(salesNet, 2),
  };
}

/** Due on the 7th day of the second month after the period ends (period end + 1 month + 7 days). */
export function dueDate(periodEnd: string): string {
  const date = new Date(`${periodEnd}T00:00:00Z`);
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() + 1);
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay) + 7);
  return date.toISOString().slice(0, 10);
}

export function registerFilingRoutes(ctx: RouteContext): void {
  const { state, clock, variety } = ctx;
  const notFound = () => detailAnswer(404, 'Not found.');
  // Filings have no key of their own: their draws follow the order they were created in.
  const diceOf = (f: FilingRecord) => variety.dice(`filing#${state.filings.getAny(f.id)?.seq ?? f.id}`);
  const withId = { record: (req: EmuRequest) => (req.params.id === undefined ? undefined : filingRef(req.params.id)) };
  const find = (req: EmuRequest) => state.filings.get(req.params.id ?? '')?.value;

  const current = (f: FilingRecord) => f.frozen ?? computeBoxes(periodTransactions(state, f), f.currency);
  const render = (f: FilingRecord) => varyFiling(canonical(f), diceOf(f));
  const canonical = (f: FilingRecord) => {
    const { boxes: _boxes, ...totals } = current(f);
    return {
      id: f.id,
      status: f.status,
      due_date: f.due_date,
      submitted_date: f.submitted_date,
      filing_reference: f.filing_reference,
      ...totals,
      currency: f.currency,
      registration_filing_type: f.registration_filing_type,
      entity_jurisdiction: f.entity_jurisdiction,
      reporting_period_start: f.reporting_period_start,
      reporting_period_end: f.reporting_period_end,
      ...(f.approved_by === undefined ? {} : { approved_by: f.approved_by }),
      ...(f.approval_notes === undefined ? {} : { approval_notes: f.approval_notes }),
      ...(f.approved_at === undefined ? {} : { approved_at: f.approved_at }),
      created_at: f.created_at,
      updated_at: f.updated_at,
    };
  };

  defineEndpoint(ctx, 'filings.create', (req) => {
    const parsed = parseDetailBody(FilingCreateRequest, req.body);
    if (!parsed.ok) return parsed.answer;
    const body = parsed.value;
    if (body.reporting_period_end < body.reporting_period_start) {
      return detailAnswer(400, `reporting_period_end ${body.reporting_period_end} is before reporting_period_start ${body.reporting_period_start}`);
    }
    // registration_filing_type names a registration (its entity jurisdiction is filed) or an entity jurisdiction.
    const ej =
      state.entityJurisdictions.get(state.registrations.get(body.registration_filing_type)?.value.entity_jurisdiction ?? '') ??
      state.entityJurisdictions.get(body.registration_filing_type);
    if (ej === undefined) {
      return detailAnswer(400, `registration_filing_type ${body.registration_filing_type} is neither a registration nor an entity jurisdiction`);
    }
    const now = isoNow(clock);
    const id = randomUUID();
    const filing: FilingRecord = {
      id,
      ...body,
      entity_jurisdiction: ej.id,
      currency: JURISDICTIONS[ej.taxable_jurisdiction]?.currency ?? 'EUR',
      status: 'draft',
      due_date: dueDate(body.reporting_period_end),
      submitted_date: null,
      filing_reference: null,
      created_at: now,
      updated_at: now,
      files: [
        { id: randomUUID(), file_type: 'vat_return', filename: `vat-return-${body.reporting_period_start}-${body.reporting_period_end}.json`, created_at: now },
        { id: randomUUID(), file_type: 'audit_trail', filename: `audit-trail-${body.reporting_period_start}-${body.reporting_period_end}.pdf`, created_at: now },
      ],
    };
    state.filings.insert(id, filing);
    return { status: 201, body: render(filing), record: filingRef(id) };
  });

  defineEndpoint(ctx, 'filings.get', (req) => {
    const filing = find(req);
    return filing ? ok(render(filing)) : notFound();
  }, withId);

  defineEndpoint(ctx, 'filings.files', (req) => {
    const filing = find(req);
    if (!filing) return notFound();
    const dice = diceOf(filing);
    return ok({
      results: filing.files
        .filter((f) => f.file_type !== 'audit_trail' || dice.on('enums'))
        .map((f) => varyFilingFile({ ...f, download_url: `${req.origin}/api/filing/v1/filings/${filing.id}/files/${f.id}/download/` }, dice)),
    });
  }, withId);

  ctx.define({
    endpoint: 'filings.download',
    method: 'GET',
    path: '/api/filing/v1/filings/:id/files/:file_id/download/',
    ...withId,
    handler: (req) => {
      const filing = find(req);
      const file = filing?.files.find((f) => f.id === req.params.file_id);
      if (!filing || !file) return notFound();
      return ok({ file: file.filename, filing: canonical(filing), boxes: current(filing).boxes });
    },
  });

  defineEndpoint(ctx, 'filings.boxes', (req) => {
    const filing = find(req);
    if (!filing) return notFound();
    const { boxes, total_vat_due } = current(filing);
    return ok(varyBoxes({ boxes, total_vat_due, reporting_period: `${filing.reporting_period_start}/${filing.reporting_period_end}` }, diceOf(filing)));
  }, withId);

  defineEndpoint(ctx, 'filings.approve', (req) => {
    const filing = find(req);
    if (!filing) return notFound();
    const parsed = parseDetailBody(FilingApproveRequest, req.body ?? {});
    if (!parsed.ok) return parsed.answer;
    if (!APPROVABLE.includes(filing.status)) {
      return detailAnswer(409, `filing is ${filing.status}: only a draft or pending_approval filing can be approved`);
    }
    const now = isoNow(clock);
    filing.frozen = current(filing);
    filing.status = 'approved';
    filing.approved_at = now;
    filing.updated_at = now;
    if (parsed.value.approved_by !== undefined) filing.approved_by = parsed.value.approved_by;
    if (parsed.value.approval_notes !== undefined) filing.approval_notes = parsed.value.approval_notes;
    return ok(render(filing));
  }, withId);
}

function periodTransactions(state: EmulatorState, f: FilingRecord): VatTransactionRecord[] {
  return state.vatTransactions
    .live()
    .map((e) => e.value)
    .filter(
      (t) =>
        t.entity_jurisdiction === f.entity_jurisdiction &&
        t.reporting_period >= f.reporting_period_start &&
        t.reporting_period <= f.reporting_period_end &&
        t.currency === f.currency,
    );
}

/**
 * Forces a filing's status (control API): `submitted` sets submitted_date and a filing_reference
 * and adds a submission receipt; `accepted` adds an acknowledgment.
 */
export function forceFilingStatus(state: EmulatorState, id: string, status: FilingStatus, now: string): FilingRecord | undefined {
  const filing = state.filings.get(id)?.value;
  if (filing === undefined) return undefined;
  filing.status = status;
  filing.updated_at = now;
  if (status === 'submitted') {
    filing.submitted_date = now;
    filing.filing_reference ??= `EMU-${filing.id.slice(0, 8).toUpperCase()}`;
    filing.files.push({ id: randomUUID(), file_type: 'submission_receipt', filename: `submission-receipt-${filing.id}.json`, created_at: now });
  } else if (status === 'accepted') {
    filing.files.push({ id: randomUUID(), file_type: 'acknowledgment', filename: `acknowledgment-${filing.id}.json`, created_at: now });
  }
  return filing;
}
