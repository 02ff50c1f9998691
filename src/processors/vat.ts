import type { VatClient, VatTransactionRequest } from '../api/index.js';
import { ERROR_CODES, TaxsyncError, type ErrorCode } from '../domain/errors.js';
import type { CanonicalEvent, InvoiceData, RefundData } from '../domain/events.js';
import { parseRecordKeyString, recordKeyString, type RecordKey } from '../domain/record-key.js';
import {
  checkBody,
  describeCorrections,
  inVatScope,
  mapVatSubmission,
  matchRegistration,
  netAmount,
  planVat,
  refundCorrection,
  undoCorrection,
  registrationRef,
  vatEnabled,
  type FiledSubmission,
  type PartCorrection,
  type VatSettings,
} from '../mapping/index.js';
import type { Metrics, VatSubmissionOutcome } from '../observability/metrics.js';
import type { RecordStore } from '../queue/record-state.js';
import type { LedgerEntry, StatedRefund, VatLedger } from '../queue/vat-ledger.js';
import { Money } from '../domain/money.js';
import { notSent } from './outcome.js';
import type { HandlerContext, HandlerOutcome, RecordHandler } from './types.js';
import { sendClaimed, sha256, unresolvedError, type AttemptDeps } from './vat-submit.js';

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

export interface VatHandlerDeps {
  vat: VatClient;
  ledger: VatLedger;
  settings: VatSettings;
  /**
   * The VAT settings of a connection's invoices (its seller facts, docs/connections.md), by
   * `event.connector`; undefined for a connection no longer configured. @defaultValue `settings` for all
   */
  settingsFor?: (connector: string) => VatSettings | undefined;
  reference: VatReferenceData;
  /** The latest-state store: a refund's VAT waits until its invoice's VAT is known. */
  records: Pick<RecordStore, 'read'>;
  /** Resends of an unknown outcome before VAT_OUTCOME_UNRESOLVED (TAXSYNC_VAT_UNKNOWN_LIMIT). @defaultValue 20 */
  unknownLimit?: number;
  /**
   * Puts a record's newest version back on its queue (reopen + job). A refund decided while its
   * invoice had no VAT filed is decided again once the invoice files some. Without it (tests of
   * one record) they are not.
   */
  requeue?: (record: RecordKey) => Promise<void>;
  /** Counts outcomes (warnings included) when given. */
  metrics?: Pick<Metrics, 'vatSubmissions'>;
  clock?: () => Date;
}

export const DEFAULT_UNKNOWN_LIMIT = 20;

const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const OPEN: ReadonlySet<string> = new Set(['in_flight', 'unknown']);
const parseBody = (entry: LedgerEntry): VatTransactionRequest | undefined => {
  try {
    return entry.body === undefined ? undefined : (JSON.parse(entry.body) as VatTransactionRequest);
  } catch {
    return undefined;
  }
};
const filedOf = (entries: readonly LedgerEntry[]): FiledSubmission[] =>
  entries.flatMap((e) => {
    const body = e.state === 'confirmed' ? parseBody(e) : undefined;
    return body === undefined ? [] : [{ body, ...(e.supplement_of === undefined ? {} : { supplementOf: e.supplement_of }) }];
  });
const correctionRequired = (what: string, corrections: readonly PartCorrection[]) => {
  const { message, fields } = describeCorrections(what, corrections);
  return new TaxsyncError('VAT_CORRECTION_REQUIRED', message, { fields });
};
const knownCode = (code: string | undefined): ErrorCode | undefined => (code !== undefined && Object.hasOwn(ERROR_CODES, code) ? (code as ErrorCode) : undefined);
const recordName = (key: string) => {
  const [, source, id] = key.split('|');
  return `${source ?? '?'}/${decodeURIComponent(id ?? '?')}`;
};

/**
 * VAT submissions (invariant 5; docs/vat.md, "Submission and the ledger"). For an invoice: every
 * unknown outcome of its earlier submissions is resolved first by resending exactly what was sent;
 * then what the invoice requires now is compared with what is filed, part by part (planVat): new
 * parts (and supplements) are submitted, claims no longer needed are withdrawn, and whatever the
 * service cannot express is a VAT_CORRECTION_REQUIRED dead letter stating the difference. A refund
 * waits for its invoice's VAT to be known, then states the correction it needs.
 */
export function createVatHandler(deps: VatHandlerDeps): RecordHandler {
  const clock = deps.clock ?? (() => new Date());

  /** The settings of the event's connection: a connection no longer configured has no seller facts to file under. */
  function settingsOf(event: CanonicalEvent): VatSettings {
    if (deps.settingsFor === undefined) return deps.settings;
    const settings = deps.settingsFor(event.connector);
    if (settings !== undefined) return settings;
    throw new TaxsyncError('MAPPING_INVALID', `VAT for ${event.record.external_id}: its connection "${event.connector}" is not configured, so its seller facts are unknown; declare it again (docs/connections.md), then replay this entry`, {
      fields: { connector: [`no connection "${event.connector}"`] },
    });
  }
  const limit = deps.unknownLimit ?? DEFAULT_UNKNOWN_LIMIT;
  const attemptDeps = (ctx: HandlerContext): AttemptDeps => ({
    vat: deps.vat,
    ledger: deps.ledger,
    unknownLimit: limit,
    metrics: deps.metrics,
    onWarnings: (number) => ctx.trace({ step: 'answered', status: 200, detail: `VAT ${number} accepted with warnings` }),
    async onAttention(number, problems, transactionId) {
      const said = `VAT ${number} accepted, but the service will not report it as it is (${problems.join('; ')})`;
      // Minutes, not a quarter: the return would be filed without it (docs/operations.md).
      ctx.logger.warn({ invoice_number: number, problems, ...(transactionId === undefined ? {} : { transaction_id: transactionId }) }, `${said}: check it in the VAT service`);
      await ctx.trace({ step: 'answered', detail: said });
    },
  });

  /** Resends the stored body of every open entry; throws while any stays open. */
  async function resolveOpen(entries: readonly LedgerEntry[], record: string, ctx: HandlerContext): Promise<string[]> {
    const done: string[] = [];
    for (const entry of entries) {
      if (!OPEN.has(entry.state) || entry.entity_jurisdiction === undefined || entry.invoice_number === undefined) continue;
      const facts = { record, body: '', bodyHash: '', reportingPeriod: '', net: '', vat: '', currency: '' };
      const claim = await deps.ledger.begin(entry.entity_jurisdiction, entry.invoice_number, facts, 'resolve');
      if (!claim.go) {
        if (claim.state === 'busy') throw new TaxsyncError('RECORD_BUSY', `VAT ${entry.invoice_number} is being submitted by another attempt`);
        continue;
      }
      done.push(await sendClaimed(attemptDeps(ctx), entry.entity_jurisdiction, entry.invoice_number, claim));
    }
    return done;
  }

  /** A new submission (a new part or a supplement); a collision is returned, everything else settles or throws. */
  async function submit(body: VatTransactionRequest, supplementOf: string | undefined, record: string, ctx: HandlerContext): Promise<string | { collision: string }> {
    const json = JSON.stringify(body);
    const ej = body.entity_jurisdiction;
    const number = body.invoice_number;
    const claim = await deps.ledger.begin(ej, number, {
      record,
      body: json,
      bodyHash: sha256(json),
      reportingPeriod: body.reporting_period,
      net: body.net,
      vat: body.vat,
      currency: body.currency,
      ...(supplementOf === undefined ? {} : { supplementOf }),
    });
    if (claim.go) {
      const line = await sendClaimed(attemptDeps(ctx), ej, number, claim);
      // Another attempt's body was resolved instead of this one: plan again on what is filed now.
      if (claim.resend) throw new TaxsyncError('RECORD_BUSY', `VAT ${number}: resolved an earlier attempt (${line}); planning again`);
      return line;
    }
    switch (claim.state) {
      case 'collision':
        return { collision: claim.owner };
      case 'unresolved':
        throw unresolvedError({ entity_jurisdiction: ej, invoice_number: number, body_hash: claim.entry?.body_hash, resends: claim.entry?.resends ?? 0, note: claim.entry?.note });
      case 'rejected':
        throw new TaxsyncError(
          knownCode(claim.entry?.code) ?? 'API_INVALID',
          `VAT ${number}: the same body was refused earlier (${claim.entry?.note ?? 'no detail'}); correct the source or the settings, then replay`,
        );
      default:
        // busy, or the ledger moved between the read and the claim (confirmed meanwhile): plan again.
        throw new TaxsyncError('RECORD_BUSY', `VAT ${number} changed while it was planned (${claim.state}); trying again`);
    }
  }

  /** What the invoice requires now: its bodies, or none and why; a NotSent outcome when it can only wait or is invalid. */
  async function targetOf(event: CanonicalEvent, record: RecordKey): Promise<{ bodies: VatTransactionRequest[]; reason?: string; quiet?: string } | HandlerOutcome> {
    const what = `VAT for invoice ${record.external_id}`;
    if (event.type === 'invoice.cancelled') return { bodies: [], reason: 'the invoice was cancelled (voided)', quiet: `${what}: cancelled before any VAT was filed` };
    if (event.type === 'invoice.deleted') return { bodies: [], reason: 'the invoice was deleted', quiet: `${what}: deleted before any VAT was filed` };
    const data = event.data as InvoiceData;
    const { types, resolved } = await deps.reference.get();
    const settings = settingsOf(event);
    const mapped = mapVatSubmission(data, { key: record, settings, transactionTypes: types, today: isoDay(clock()), resolved });
    if (mapped.kind === 'send') return { bodies: mapped.body };
    // `reason` explains a correction of VAT already filed; `quiet` a run with nothing filed and nothing to send.
    if (mapped.kind === 'ignore') return { bodies: [], reason: `it no longer carries VAT for taxsync: ${mapped.reason}`, quiet: mapped.reason };
    return notSent(mapped);
  }

  async function handleInvoice(event: CanonicalEvent, ctx: HandlerContext): Promise<HandlerOutcome> {
    const record = recordKeyString(ctx.record);
    const resolvedLines = await resolveOpen(await deps.ledger.forRecord(record), record, ctx);
    const entries = await deps.ledger.forRecord(record);
    const unresolved = entries.find((e) => e.state === 'unresolved');
    if (unresolved !== undefined) throw unresolvedError(unresolved);

    const target = await targetOf(event, ctx.record);
    if ('kind' in target) return target;
    const today = isoDay(clock());
    const { types } = await deps.reference.get();
    const knownTypeIds = new Set(types.map((t) => t.id));
    const plan = planVat({
      target: target.bodies,
      ...(target.reason === undefined ? {} : { reason: target.reason }),
      filed: filedOf(entries),
      claimed: entries.flatMap((e) =>
        (e.state === 'pending' || e.state === 'rejected') && e.entity_jurisdiction !== undefined && e.invoice_number !== undefined
          ? [{ entityJurisdiction: e.entity_jurisdiction, invoiceNumber: e.invoice_number, state: e.state }]
          : [],
      ),
      increases: deps.settings.increases,
      check: (body) => checkBody(body, { today, knownTypeIds, tolerance: deps.settings.tolerance }),
    });
    for (const w of plan.withdraw) await deps.ledger.withdraw(w.entityJurisdiction, w.invoiceNumber, record);
    const done = [...resolvedLines];
    const collisions: string[] = [];
    for (const s of plan.submit) {
      const result = await submit(s.body, s.supplementOf, record, ctx);
      if (typeof result === 'string') done.push(result);
      else {
        deps.metrics?.vatSubmissions.inc({ outcome: 'collision' satisfies VatSubmissionOutcome });
        collisions.push(
          `${s.body.invoice_number} (entity jurisdiction ${s.body.entity_jurisdiction}) is already claimed by ${recordName(result.collision)}, so this record (${recordName(record)}) cannot use it`,
        );
      }
    }
    const what = `VAT for invoice ${ctx.record.external_id}`;
    if (deps.requeue !== undefined && (done.length > 0 || entries.some((e) => e.state === 'confirmed'))) {
      // Refunds of this invoice that found nothing to correct are decided again on the VAT filed
      // now. Done on every run with VAT filed, so a crash between a filing and this line loses
      // nothing; a refund that reported its correction is not asked again (its entry, once
      // discarded by the operator, must not come back).
      for (const refund of await deps.ledger.openRefundsOf(record)) await deps.requeue(parseRecordKeyString(refund));
    }
    if (collisions.length > 0) {
      throw new TaxsyncError(
        'VAT_NUMBER_COLLISION',
        `${what}: ${collisions.join('; ')}. Two records of different sources (or an ERP reusing numbers) produce the same invoice number for one entity jurisdiction, and the service takes a number once. Give each source its own prefix (vat.invoice_number.prefix_by_source) or renumber the document, then replay this entry`,
        { fields: { invoice_number: collisions } },
      );
    }
    if (plan.corrections.length > 0) throw correctionRequired(what, plan.corrections);
    // The invoice now maps to another entity jurisdiction than the one it was filed under: it stays there (planVat).
    const kept = plan.kept === undefined ? '' : ` under ${plan.kept.filed.join(', ')} (the invoice now maps to ${plan.kept.now.join(', ')}; filed VAT stays where it was filed)`;
    if (plan.kept !== undefined) ctx.logger.info({ filed: plan.kept.filed, now: plan.kept.now }, `${what}: its entity jurisdiction changed after filing; kept where it was filed`);
    const unchanged = plan.unchanged.length > 0 ? [`${plan.unchanged.join(', ')} filed and unchanged${kept}`] : [];
    const parts = [...done, ...unchanged, ...plan.withdraw.map((w) => `claim ${w.invoiceNumber} withdrawn (never sent)`)];
    if (parts.length === 0) return { kind: 'done', detail: `nothing sent: ${target.quiet ?? target.reason ?? 'nothing to report'}` };
    // "nothing sent:" whenever this run sent nothing, as every handler's detail says it.
    return { kind: 'done', detail: `${done.length === 0 ? 'nothing sent: ' : ''}VAT ${parts.join('; ')}` };
  }

  /** Whether the refund's correction was reported (and so may need undoing). */
  async function reported(invoice: string, refund: string): Promise<boolean> {
    const standing = await deps.ledger.refundStanding(invoice, refund);
    return standing === 'corrected' || standing === 'undone';
  }

  /**
   * A version of a refund whose correction was already reported (docs/vat.md: such a refund is
   * not asked again): `fresh` when none was (decide as usual), `stated` when an earlier version
   * reported the same amounts (nothing new), else `change`: state the change from what an earlier
   * version took back (`from`; none: the whole correction, when this very version is run again
   * after a crash between noting and reporting it, or it was reported before amounts were kept).
   */
  async function earlierCorrection(invoice: string, refund: string, eventId: string, data: RefundData): Promise<{ kind: 'fresh' } | { kind: 'stated'; by: string } | { kind: 'change'; from: TakenBack | undefined }> {
    if ((await deps.ledger.refundStanding(invoice, refund)) !== 'corrected') return { kind: 'fresh' };
    const stated = await deps.ledger.statedRefund(invoice, refund);
    if (stated === undefined) return { kind: 'fresh' };
    if (stated.event === eventId) return { kind: 'change', from: stated.from };
    if (sameTakenBack(stated, takenBack(data))) return { kind: 'stated', by: stated.event };
    return { kind: 'change', from: { amount: stated.amount, ...(stated.tax_amount === undefined ? {} : { tax_amount: stated.tax_amount }) } };
  }

  /**
   * The refund's correction, or — its amounts changed after a correction was reported — the undo
   * of that one and the new one. `inclusive`: the invoice's prices include tax, so a refund priced
   * as its invoice (Shopify's) has its tax in `amount`, and its net is `amount` less that tax.
   */
  function refundCorrections(data: RefundData, filed: readonly FiledSubmission[], reason: string, from: TakenBack | undefined, inclusive: boolean): PartCorrection[] {
    const correct = (refund: RefundData, why: string) => refundCorrection({ ...refund, amount: netAmount(refund, inclusive) }, filed, why);
    if (from === undefined) return [correct(data, reason)];
    const before: RefundData = { ...data, amount: new Money(from.amount) };
    if (from.tax_amount === undefined) delete before.tax_amount;
    else before.tax_amount = new Money(from.tax_amount);
    return [
      undoCorrection(correct(before, `${reason}; its amounts changed after its correction was reported: undo that one (amount ${from.amount})`)),
      correct(data, `${reason} (its amounts now)`),
    ];
  }

  async function handleRefund(event: CanonicalEvent, ctx: HandlerContext): Promise<HandlerOutcome> {
    const what = `VAT for refund ${ctx.record.external_id}`;
    if (!vatEnabled(deps.settings)) return { kind: 'done', detail: `nothing sent: ${what}: VAT is off (no registrations configured)` };
    const applied = ctx.state.appliedEvent;
    const data = { ...(applied?.type === 'refund.created' ? applied.data : {}), ...(event.data as Partial<RefundData>) } as RefundData;
    const undo = event.type !== 'refund.created';
    if (data.invoice_external_id === undefined) {
      const scope = inVatScope(data, settingsOf(event));
      if (!scope.inScope || data.amount === undefined) return { kind: 'done', detail: `nothing sent: ${what}: ${scope.inScope ? 'no amount' : scope.reason}` };
      // Its standing is kept against itself: a credit cancelled before its correction was reported
      // (both events coalesced into one run) has nothing to undo.
      const self = recordKeyString(ctx.record);
      if (undo && !(await reported(self, self))) {
        await deps.ledger.noteRefund(self, self, 'closed');
        return { kind: 'done', detail: `nothing sent: ${what}: cancelled before a VAT correction was reported for it, so nothing to undo` };
      }
      const earlier = undo ? undefined : await earlierCorrection(self, self, event.id, data);
      if (earlier?.kind === 'stated') return { kind: 'done', detail: `nothing sent: ${what}: its VAT correction was reported for ${earlier.by}, with the same amounts` };
      const from = earlier?.kind === 'change' ? earlier.from : undefined;
      const reason = undo ? 'a credit with no invoice was cancelled: undo its correction if it was made' : 'a credit with no invoice reduces VAT';
      const error = correctionRequired(what, undo ? [undoCorrection(refundCorrection(data, [], reason))] : refundCorrections(data, [], reason, from, false));
      await deps.ledger.noteRefund(self, self, undo ? 'undone' : 'corrected', undo ? undefined : statedBy(event.id, data, from));
      throw error;
    }
    const invoiceKey: RecordKey = { kind: 'vat', source: ctx.record.source, external_id: data.invoice_external_id };
    // Noted before the invoice's VAT is read, and read by the invoice after it files: whichever
    // runs second sees the other, so no refund keeps a decision taken on VAT that changed since.
    const invoiceRecord = recordKeyString(invoiceKey);
    const refundRecord = recordKeyString(ctx.record);
    const of = `invoice ${data.invoice_external_id}`;
    if (undo) {
      // Only a correction that was reported can be undone: a refund cancelled before that took
      // nothing back, and is never decided again (docs/vat.md, "Changes after filing").
      if (!(await reported(invoiceRecord, refundRecord))) {
        await deps.ledger.noteRefund(invoiceRecord, refundRecord, 'closed');
        return { kind: 'done', detail: `nothing sent: ${what}: cancelled before a VAT correction was reported for it, so nothing to undo` };
      }
    }
    const earlier = undo ? undefined : await earlierCorrection(invoiceRecord, refundRecord, event.id, data);
    if (earlier?.kind === 'stated') return { kind: 'done', detail: `nothing sent: ${what}: its VAT correction was reported for ${earlier.by}, with the same amounts` };
    // A refund already corrected stays so (it is not decided again when its invoice files VAT).
    if (earlier?.kind === 'fresh') await deps.ledger.noteRefund(invoiceRecord, refundRecord, 'open');
    const from = earlier?.kind === 'change' ? earlier.from : undefined;
    const invoice = await deps.records.read(invoiceKey);
    if (invoice.seq === 0) {
      return { kind: 'wait', reason: `${what}: taxsync has not seen ${of} yet; its VAT decides whether this refund needs a correction`, missing: { record: invoiceKey, what: 'invoice' } };
    }
    const entries = await deps.ledger.forRecord(recordKeyString(invoiceKey));
    if (invoice.seq > invoice.appliedSeq || entries.some((e) => OPEN.has(e.state) || e.state === 'unresolved')) {
      return { kind: 'wait', reason: `${what}: the VAT of ${of} is still being decided` };
    }
    const filed = filedOf(entries);
    if (filed.length === 0) return { kind: 'done', detail: `nothing sent: ${what}: no VAT was filed for ${of}, so nothing to correct` };
    const latest = invoice.event;
    if (latest?.type === 'invoice.cancelled' || latest?.type === 'invoice.deleted' || (latest?.type === 'invoice.upserted' && latest.data.status === 'cancelled')) {
      return { kind: 'done', detail: `nothing sent: ${what}: ${of} is cancelled, and its own correction takes back all of its VAT` };
    }
    if (data.amount === undefined) return { kind: 'done', detail: `nothing sent: ${what}: the refund states no amount` };
    const reason = undo ? `refund ${ctx.record.external_id} of ${of} was cancelled: undo its correction if it was made` : `refund ${ctx.record.external_id} of ${of} takes back VAT that was filed`;
    const inclusive = latest?.type === 'invoice.upserted' && latest.data.tax_inclusive === true;
    const corrections = refundCorrections(data, filed, reason, undo ? undefined : from, inclusive);
    const error = correctionRequired(what, undo ? corrections.map(undoCorrection) : corrections);
    await deps.ledger.noteRefund(invoiceRecord, refundRecord, undo ? 'undone' : 'corrected', undo ? undefined : statedBy(event.id, data, from));
    throw error;
  }

  return async (event, ctx) => {
    switch (event.type) {
      case 'invoice.upserted':
      case 'invoice.cancelled':
      case 'invoice.deleted':
        return handleInvoice(event, ctx);
      case 'refund.created':
      case 'refund.cancelled':
      case 'refund.deleted':
        return handleRefund(event, ctx);
      default:
        return { kind: 'done', detail: `nothing for VAT: ${event.type}` };
    }
  };
}

type TakenBack = Omit<StatedRefund, 'event' | 'from'>;
/** What a refund takes back: its amount and stated tax (what refundCorrection reads). */
const takenBack = (data: RefundData): TakenBack => ({ amount: data.amount.toString(), ...(data.tax_amount === undefined ? {} : { tax_amount: data.tax_amount.toString() }) });
const sameTakenBack = (a: TakenBack, b: TakenBack): boolean =>
  new Money(a.amount).equals(b.amount) && (a.tax_amount === undefined || b.tax_amount === undefined ? a.tax_amount === b.tax_amount : new Money(a.tax_amount).equals(b.tax_amount));
const statedBy = (event: string, data: RefundData, from: TakenBack | undefined): StatedRefund => ({ event, ...takenBack(data), ...(from === undefined ? {} : { from }) });
