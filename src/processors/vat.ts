import { createHash } from 'node:crypto';
import type { VatClient, VatTransactionRequest } from '../api/index.js';
import { TaxsyncError, isTaxsyncError } from '../domain/errors.js';
import type { InvoiceData } from '../domain/events.js';
import { recordKeyString, type RecordKey } from '../domain/record-key.js';
import {
  mapVatSubmission,
  matchRegistration,
  registrationRef,
  vatForCancellation,
  vatForRefund,
  vatForUpdate,
  type VatOriginal,
  type VatSettings,
} from '../mapping/index.js';
import type { LedgerEntry, VatLedger } from '../queue/vat-ledger.js';
import type { Metrics } from '../observability/metrics.js';
import { notSent } from './outcome.js';
import type { HandlerContext, HandlerOutcome, RecordHandler } from './types.js';

export interface VatReferenceData {
  /** The transaction types list and the configured registrations resolved to entity jurisdictions, cached. */
  get(): Promise<{ types: { id: string; name: string }[]; resolved: Map<string, string> }>;
}

/** Fetches the types list and resolves registrations given by jurisdiction, refreshed after `ttlMs`. */
export function createVatReferenceData(vat: VatClient, settings: VatSettings, options: { ttlMs: number; clock?: () => number }): VatReferenceData {
  const clock = options.clock ?? Date.now;
  let cached: { at: number; value: { types: { id: string; name: string }[]; resolved: Map<string, string> } } | undefined;
  let loading: Promise<{ types: { id: string; name: string }[]; resolved: Map<string, string> }> | undefined;
  async function load() {
    const types = (await vat.transactionTypes()).map((t) => ({ id: t.id, name: t.name }));
    const resolved = new Map<string, string>();
    const toResolve = settings.registrations.filter((r) => r.entity_jurisdiction === undefined);
    if (toResolve.length > 0) {
      const list = [];
      for await (const registration of vat.registrations.iterate()) list.push(registration);
      for (const r of toResolve) {
        const match = matchRegistration(r, list);
        if (match.ok) resolved.set(registrationRef(r), match.entity_jurisdiction);
      }
    }
    cached = { at: clock(), value: { types, resolved } };
    return cached.value;
  }
  return {
    get() {
      if (cached && clock() - cached.at < options.ttlMs) return Promise.resolve(cached.value);
      loading ??= load().finally(() => {
        loading = undefined;
      });
      return loading;
    },
  };
}

function originalOf(entries: readonly LedgerEntry[]): VatOriginal {
  const confirmed = entries.filter((e) => e.state === 'confirmed' && e.body);
  if (entries.some((e) => e.state === 'pending' || e.state === 'in_flight' || e.state === 'unknown')) return { state: 'pending' };
  if (confirmed.length > 0) return { state: 'submitted', bodies: confirmed.map((e) => JSON.parse(e.body!) as VatTransactionRequest) };
  return { state: 'none' };
}

const isoDay = (date: Date) => date.toISOString().slice(0, 10);

/**
 * VAT submissions (invariant 5): map and validate locally, then submit each body through the
 * ledger. A submission already confirmed is never sent again; an ambiguous failure (the request
 * may have been accepted) marks the entry unknown, and a later VAT_DUPLICATE then means accepted.
 */
export function createVatHandler(deps: {
  vat: VatClient;
  ledger: VatLedger;
  settings: VatSettings;
  reference: VatReferenceData;
  /** Counts outcomes (warnings included) when given. */
  metrics?: Pick<Metrics, 'vatSubmissions'>;
  clock?: () => Date;
}): RecordHandler {
  const clock = deps.clock ?? (() => new Date());
  const count = (outcome: string) => deps.metrics?.vatSubmissions.inc({ outcome });

  async function submitOne(body: VatTransactionRequest, record: RecordKey, ctx: HandlerContext): Promise<string> {
    const json = JSON.stringify(body);
    const ej = body.entity_jurisdiction;
    const number = body.invoice_number;
    const begin = await deps.ledger.begin(ej, number, {
      record: recordKeyString(record),
      body: json,
      bodyHash: createHash('sha256').update(json).digest('hex'),
      reportingPeriod: body.reporting_period,
      net: body.net,
      vat: body.vat,
      currency: body.currency,
    });
    if (!begin.go) {
      if (begin.state === 'busy') throw new TaxsyncError('RECORD_BUSY', `VAT ${number} is being submitted by another attempt`);
      return `${number}: ${begin.state} earlier, not sent again`;
    }
    let result: Awaited<ReturnType<typeof deps.vat.submitTransaction>>;
    try {
      result = await deps.vat.submitTransaction(body);
      await deps.ledger.confirm(ej, number, { transactionId: result.transaction.id, warnings: result.withWarnings });
    } catch (error) {
      if (!isTaxsyncError(error)) {
        await deps.ledger.markUnknown(ej, number, `unexpected error: ${(error as Error)?.message}`);
        throw error;
      }
      if (error.code === 'VAT_DUPLICATE') {
        if (begin.ambiguous) {
          await deps.ledger.confirm(ej, number, { warnings: false, note: 'accepted by an earlier attempt whose answer was lost (duplicate answer)' });
          count('confirmed_by_duplicate');
          return `${number} was already accepted by an earlier attempt`;
        }
        await deps.ledger.reject(ej, number, error.message);
        count('rejected');
        throw error;
      }
      if (error.status !== undefined && error.status >= 200 && error.status < 300) {
        // Accepted, but the answer did not match the contract: never send it again.
        await deps.ledger.confirm(ej, number, { warnings: false, note: `accepted; unreadable answer: ${error.message}` });
        count('accepted');
        return `${number} accepted (answer unreadable)`;
      }
      if (error.ambiguous || error.code === 'API_SERVER_ERROR' || error.code === 'API_TIMEOUT') {
        // It may have been processed: a retry's duplicate answer will tell.
        await deps.ledger.markUnknown(ej, number, error.message);
        count('unknown');
      } else if (error.retryable) {
        await deps.ledger.release(ej, number, error.message);
        count('released');
      } else {
        await deps.ledger.reject(ej, number, error.message);
        count('rejected');
      }
      throw error;
    }
    // After the try: a failure from here on (the trace write) must not turn the confirmed entry
    // back into an unknown one.
    count(result.withWarnings ? 'accepted_with_warnings' : 'accepted');
    if (result.withWarnings) await ctx.trace({ step: 'answered', status: 200, detail: `VAT ${number} accepted with warnings` });
    return `${number} accepted (${result.status}${result.withWarnings ? ', with warnings' : ''})`;
  }

  async function submitInvoice(data: InvoiceData, ctx: HandlerContext): Promise<HandlerOutcome> {
    const record = ctx.record;
    const entries = await deps.ledger.forRecord(recordKeyString(record));
    const original = originalOf(entries);
    if (data.status === 'cancelled') return notSent(vatForCancellation(data, { key: record, settings: deps.settings, original }));
    const { types, resolved } = await deps.reference.get();
    let mapped = mapVatSubmission(data, { key: record, settings: deps.settings, transactionTypes: types, today: isoDay(clock()), resolved });
    if (original.state === 'submitted') mapped = vatForUpdate(mapped, original.bodies);
    if (mapped.kind !== 'send') return notSent(mapped);
    const done: string[] = [];
    for (const body of mapped.body) done.push(await submitOne(body, record, ctx));
    return { kind: 'done', detail: `VAT ${done.join('; ')}` };
  }

  return async (event, ctx) => {
    switch (event.type) {
      case 'invoice.upserted':
        return submitInvoice(event.data, ctx);
      case 'invoice.cancelled': {
        const entries = await deps.ledger.forRecord(recordKeyString(ctx.record));
        return notSent(vatForCancellation(event.data, { key: ctx.record, settings: deps.settings, original: originalOf(entries) }));
      }
      case 'refund.created': {
        const invoiceId = event.data.invoice_external_id;
        const entries = invoiceId === undefined ? [] : await deps.ledger.forRecord(recordKeyString({ ...ctx.record, external_id: invoiceId }));
        return notSent(vatForRefund(event.data, { key: ctx.record, settings: deps.settings, original: originalOf(entries) }));
      }
      default:
        return { kind: 'done', detail: `nothing for VAT: ${event.type}` };
    }
  };
}
