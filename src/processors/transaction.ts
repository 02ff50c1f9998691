import type { TaxClient } from '../api/index.js';
import { InvoiceData, RefundData, type CanonicalEvent } from '../domain/events.js';
import { Money } from '../domain/money.js';
import type { RecordKey } from '../domain/record-key.js';
import {
  cancelledInvoice,
  cancelledRefund,
  mapInvoice,
  mapInvoiceCancelled,
  mapRefund,
  mapRefundCancelled,
  type MappingSettings,
  type OriginalTransaction,
} from '../mapping/index.js';
import type { CustomerWriters } from '../queue/customer-writer.js';
import type { AppliedWrites, RecordStore } from '../queue/record-state.js';
import type { RefundLedger } from '../queue/refund-ledger.js';
import { taxVariance, type VarianceThresholds } from '../variance/compute.js';
import type { VarianceStore } from '../variance/store.js';
import { invoiceCustomerFirst } from './customer-write.js';
import type { FetchOriginal } from './fetch-original.js';
import { accepted, acceptedOutcome, deleted, found, notSent } from './outcome.js';
import { sentHash, unchanged } from './sent-hash.js';
import type { HandlerContext, HandlerOutcome, RecordHandler } from './types.js';

export interface TransactionHandlerDeps {
  tax: TaxClient;
  records: RecordStore;
  ledger: RefundLedger;
  settings: MappingSettings;
  /** Charged-vs-calculated tax of invoices (src/variance/); absent: not compared. */
  variance?: { store: VarianceStore; thresholds: VarianceThresholds; clock?: () => Date };
  /** Asks the platform for a refund's original taxsync never received (./fetch-original.ts); absent: the refund just waits. */
  fetchOriginal?: FetchOriginal;
  /** The customers' writer locks: an invoice's customer facts are written under the customer's (./customer-write.ts). */
  writers: CustomerWriters;
}

/**
 * The invoice of the record's applied copy (the version the engine may hold): an upsert, or a
 * cancellation kept whole (laid over the version before it).
 */
function previousInvoice(event: CanonicalEvent | undefined): InvoiceData | undefined {
  if (event?.type === 'invoice.upserted') return event.data;
  if (event?.type !== 'invoice.cancelled') return undefined;
  const whole = InvoiceData.safeParse(event.data);
  return whole.success ? whole.data : undefined;
}

/** The refund of the record's applied copy: a created refund, or a cancellation kept whole. */
function previousRefund(event: CanonicalEvent | undefined): RefundData | undefined {
  if (event?.type === 'refund.created') return event.data;
  if (event?.type !== 'refund.cancelled') return undefined;
  const whole = RefundData.safeParse(event.data);
  return whole.success ? whole.data : undefined;
}

/**
 * Invoices → PUT /v1/transactions/; refunds → linked refunds once their invoice exists in the tax
 * engine (invariant 4: until then the job waits); deletions → DELETE by key.
 */
export function createTransactionHandler(deps: TransactionHandlerDeps): RecordHandler {
  async function upsert(body: Parameters<TaxClient['transactions']['upsert']>[0], what: string, ctx: HandlerContext, invoice?: { key: RecordKey; data: InvoiceData }): Promise<HandlerOutcome> {
    const hash = sentHash(body);
    const skip = unchanged(ctx, hash, what);
    if (skip) {
      if (!invoice || !deps.variance) return skip;
      const variance = await checkVariance(invoice);
      return { ...skip, detail: `${skip.detail}${variance.detail}`, alsoOnApplied: variance.write };
    }
    await ctx.sending();
    const answer = await accepted(
      () => deps.tax.transactions.upsert(body),
      async () => (await deps.tax.transactions.getByKey(body.source, body.external_id)).id,
    );
    if (answer.kind === 'unreadable') {
      // The engine's tax for this body is unknown: the basis of the body before it must not judge it later.
      const store = invoice ? deps.variance?.store : undefined;
      const forget = store && invoice ? (writes: AppliedWrites) => store.forgetBasis(writes, invoice.key) : undefined;
      return { ...acceptedOutcome(what, answer, 'so it was read back by key'), sentHash: hash, ...(forget ? { alsoOnApplied: forget } : {}) };
    }
    const transaction = answer.record;
    const tax = transaction.tax?.total_tax === undefined ? '' : `, total tax ${transaction.tax.total_tax}`;
    const variance = invoice ? await checkVariance(invoice, { engine_id: transaction.id, computed: transaction.tax?.total_tax }) : undefined;
    return {
      kind: 'done',
      detail: `${what} ${transaction.id} upserted${tax}${variance?.detail ?? ''}`,
      taxId: transaction.id,
      sentHash: hash,
      ...(variance?.write ? { alsoOnApplied: variance.write } : {}),
    };
  }

  /** docs/operations.md, "Tax variance": the tax the platform charged against the engine's; recorded above the thresholds. */
  // An unchanged body is not sent (skip unchanged): the engine's tax for it is the one kept when it was.
  // Its writes go with the version's mark as applied (the record processor's one transaction).
  async function checkVariance(
    invoice: { key: RecordKey; data: InvoiceData },
    answered?: { engine_id: string; computed: string | undefined },
  ): Promise<{ detail: string; write?: (writes: AppliedWrites) => void }> {
    const v = deps.variance;
    if (v === undefined) return { detail: '' };
    const basis = answered === undefined ? await v.store.basis(invoice.key) : answered.computed === undefined ? undefined : { engine_id: answered.engine_id, computed: answered.computed };
    // Not sent and no engine tax known for the body held (an invoice sent before the basis was
    // kept, or whose answer had none): nothing to judge, and what is recorded stays as it is.
    if (answered === undefined && basis === undefined) return { detail: '' };
    const found = taxVariance(invoice.data, basis?.computed, v.thresholds);
    const now = (v.clock ?? (() => new Date()))();
    const sent = answered === undefined ? undefined : { basis: basis ?? null };
    return {
      detail: found ? `; tax variance: charged ${found.charged}, computed ${found.computed} (${found.difference} ${found.currency})` : '',
      write: (multi) => v.store.setTo(multi, invoice.key, found && basis ? { ...found, engine_id: basis.engine_id } : undefined, now, sent),
    };
  }

  /** The refund's original as the tax engine has it, with taxsync's canonical invoice when known. */
  async function original(invoiceKey: RecordKey): Promise<OriginalTransaction | 'recording' | undefined> {
    const engine = await found(() => deps.tax.transactions.getByKey(invoiceKey.source, invoiceKey.external_id));
    if (!engine) return undefined;
    const state = await deps.records.read(invoiceKey);
    const invoice = previousInvoice(state.appliedEvent);
    // The engine holds the invoice a moment before taxsync records its write as applied. A refund
    // read in between would fall back to the engine's amounts (whose is_tax_inclusive a service may
    // leave out) although taxsync is about to hold the canonical invoice: it waits for that instead.
    // Only an invoice taxsync never received (sent before it went live) is read from the engine.
    if (invoice === undefined && state.event !== undefined && state.appliedSeq < state.seq) return 'recording';
    return {
      id: engine.id,
      ...(invoice ? { invoice } : {}),
      ...(engine.amounts ? { amounts: engine.amounts } : {}),
      ...(engine.is_tax_inclusive === undefined ? {} : { is_tax_inclusive: engine.is_tax_inclusive }),
      ...(engine.tax?.total_tax === undefined ? {} : { total_tax: engine.tax.total_tax }),
    };
  }

  const handle: RecordHandler = async (event, ctx) => {
    const key = ctx.record;
    const settings = deps.settings;
    switch (event.type) {
      case 'invoice.upserted': {
        const mapped = mapInvoice(event.data, { key, settings });
        if (mapped.kind !== 'send') return notSent(mapped);
        return (await invoiceCustomerFirst(deps, event, event.data)) ?? upsert(mapped.body, 'invoice', ctx, { key, data: event.data });
      }
      case 'invoice.cancelled': {
        const previous = previousInvoice(ctx.state.appliedEvent);
        const whole = cancelledInvoice(event.data, previous);
        // Not a whole invoice: nothing is sent (nothing to cancel, or a dead letter), so the copy stays.
        ctx.keep(whole ? { ...event, data: whole } : null);
        const mapped = mapInvoiceCancelled(event.data, { key, settings, ...(previous ? { previous } : {}) });
        return mapped.kind === 'send' ? upsert(mapped.body, 'cancelled invoice', ctx) : notSent(mapped);
      }
      case 'refund.created':
      case 'refund.cancelled': {
        const previous = previousRefund(ctx.state.appliedEvent);
        if (event.type === 'refund.cancelled') {
          // Without a previous refund nothing is sent (the engine never held it): the copy stays,
          // so a replay or resend of this cancellation never creates a refund there.
          const whole = cancelledRefund(event.data, previous);
          ctx.keep(whole ? { ...event, data: whole } : null);
        }
        const invoiceId = event.data.invoice_external_id ?? previous?.invoice_external_id;
        const invoiceKey = invoiceId === undefined ? undefined : { kind: 'transaction' as const, source: key.source, external_id: invoiceId };
        const origin = invoiceKey ? await original(invoiceKey) : undefined;
        if (invoiceKey && origin === 'recording') {
          return { kind: 'wait', reason: `original invoice ${invoiceKey.external_id} is being written to the tax engine`, missing: { record: invoiceKey, what: 'original' } };
        }
        if (invoiceKey && !origin) {
          // Only an original taxsync never received is asked for: one it holds is on its way.
          const asked = deps.fetchOriginal && (await deps.records.read(invoiceKey)).seq === 0 ? await deps.fetchOriginal(event.connector, invoiceKey, ctx.logger) : undefined;
          const reason = `original invoice ${invoiceKey.external_id} is not in the tax engine yet${asked ? `; ${asked}` : ''}`;
          return { kind: 'wait', reason, missing: { record: invoiceKey, what: 'original' } };
        }
        const send = async (): Promise<HandlerOutcome> => {
          const claims = invoiceKey ? await deps.ledger.claims(invoiceKey, key.external_id) : { others: new Money(0), own: new Money(0) };
          const refundCtx = {
            key,
            settings,
            ...(origin && origin !== 'recording' ? { original: origin } : {}),
            alreadyRefunded: claims.others,
            claimed: claims.own,
          };
          const mapped =
            event.type === 'refund.created'
              ? mapRefund(event.data, refundCtx)
              : mapRefundCancelled(event.data, { ...refundCtx, ...(previous ? { previous } : {}) });
          if (mapped.kind !== 'send') return notSent(mapped);
          const what = event.type === 'refund.created' ? 'refund' : 'cancelled refund';
          // Claimed before the write leaves (invariant 4): the engine may hold it even if no answer comes.
          if (invoiceKey) await deps.ledger.reserve(invoiceKey, key.external_id, mapped.fraction);
          const outcome = await upsert(mapped.body, invoiceKey ? `${what} (${mapped.fraction.toFixed()} of ${invoiceKey.external_id})` : `unlinked ${what}`, ctx);
          if (invoiceKey) await deps.ledger.record(invoiceKey, key.external_id, mapped.fraction);
          // Moved to another invoice: the one it left no longer has this refund in the engine.
          const left = previous?.invoice_external_id;
          if (left !== undefined && left !== invoiceKey?.external_id) await deps.ledger.forget({ kind: 'transaction', source: key.source, external_id: left }, key.external_id);
          return outcome;
        };
        return invoiceKey ? deps.ledger.withInvoiceLock(invoiceKey, send) : send();
      }
      case 'invoice.deleted':
        await ctx.sending({ keepCopy: true });
        return { ...(await deleted(() => deps.tax.transactions.deleteByKey(key.source, key.external_id), 'invoice')), sentHash: null };
      case 'refund.deleted': {
        await ctx.sending({ keepCopy: true });
        const outcome = await deleted(() => deps.tax.transactions.deleteByKey(key.source, key.external_id), 'refund');
        const invoiceId = previousRefund(ctx.state.appliedEvent)?.invoice_external_id;
        if (invoiceId) await deps.ledger.forget({ kind: 'transaction', source: key.source, external_id: invoiceId }, key.external_id);
        return { ...outcome, sentHash: null };
      }
      default:
        return { kind: 'done', detail: `nothing sent: ${event.type} is not a transaction event` };
    }
  };
  // An invoice upsert sends the invoice as held and never waits (its customer's facts go to the
  // customer's own record, under its writer lock): its read does sending()'s work. Cancellations keep other copies and
  // refunds wait, so they call sending() themselves.
  return Object.assign(handle, { sendsHeldEvent: ['invoice.upserted'] as const });
}
