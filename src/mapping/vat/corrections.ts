import type { VatTransactionRequest } from '../../api/schemas/vat.js';
import type { FieldErrors } from '../../domain/errors.js';
import type { RefundData } from '../../domain/events.js';
import { Money, formatMoney, roundMoney, type Decimal } from '../../domain/money.js';
import { ZERO } from './amounts.js';

/**
 * What to do with an invoice whose VAT may already be filed (docs/vat.md, "Changes after
 * filing"). PURE: the processor passes in what the ledger holds and what the invoice maps to now.
 *
 * The service takes only a positive net and has no update, void or correction endpoint, so what
 * was accepted stays filed. A change can still be filed where the spec allows a new submission: a
 * new positive part (a VAT rate the invoice did not have), and — with `vat.increases: supplement`
 * — an increase of a part as a supplementary submission of the difference. Everything else is a
 * correction the operator makes in the filing, stated exactly (net, vat and gross difference).
 */

export interface Amounts {
  net: Decimal;
  vat: Decimal;
  gross: Decimal;
}

/** A submission the service accepted (a ledger entry `confirmed`), with the body that was sent. */
export interface FiledSubmission {
  body: VatTransactionRequest;
  /** A supplementary submission: the invoice number of the part it adds to. */
  supplementOf?: string;
}

/** One filed part (a VAT rate of the invoice) that needs a manual correction in the filing. */
export interface PartCorrection {
  /** The invoice number the part was filed under. */
  number: string;
  entityJurisdiction: string;
  reportingPeriod: string;
  currency: string;
  /** What the filing holds for it (its submission plus any supplements). */
  filed: Amounts;
  /** What the invoice requires now. */
  now: Amounts;
  /** now − filed: what the operator adds to (or, negative, takes off) the filing. */
  difference: Amounts;
  /** Facts other than amounts that differ from the filed submission, `field: filed → now`. */
  changed: FieldErrors;
  /** Why, in words. */
  reason: string;
}

export interface PlannedSubmission {
  body: VatTransactionRequest;
  supplementOf?: string;
}

export interface VatPlan {
  /** New submissions: new parts, supplements. */
  submit: PlannedSubmission[];
  /** Claims (ledger entries never sent) the invoice no longer needs. */
  withdraw: { entityJurisdiction: string; invoiceNumber: string }[];
  corrections: PartCorrection[];
  /** Filed parts that are still exactly what the invoice requires. */
  unchanged: string[];
}

export interface VatPlanInput {
  /** What the invoice maps to now; empty when it no longer carries VAT. */
  target: readonly VatTransactionRequest[];
  /** Why the invoice carries no VAT now (voided, deleted, out of scope…); with an empty target. */
  reason?: string;
  filed: readonly FiledSubmission[];
  /** Numbers this record has claimed but never had accepted (pending or rejected entries). */
  claimed: readonly { entityJurisdiction: string; invoiceNumber: string; state: 'pending' | 'rejected' }[];
  /** `vat.increases` (docs/decisions.md). */
  increases: 'manual' | 'supplement';
  /** The one validation of a body (checkBody), for supplements. */
  check: (body: VatTransactionRequest) => { ok: true; body: VatTransactionRequest } | { ok: false; fields: FieldErrors };
}

/** A part is the invoice's VAT at one rate and rate type, in one entity jurisdiction. */
const partKey = (b: Pick<VatTransactionRequest, 'entity_jurisdiction' | 'vat_rate' | 'vat_rate_type'>) =>
  `${b.entity_jurisdiction}|${b.vat_rate}|${b.vat_rate_type}`;
const numberKey = (ej: string, number: string) => `${ej}|${number}`;

const AMOUNT_FIELDS = ['net', 'vat', 'gross'] as const;
/** The facts of a part besides its number and amounts: a difference in any is a correction. */
const FACT_FIELDS = [
  'invoice_date',
  'partner_name',
  'partner_country',
  'vat_number',
  'currency',
  'reporting_period',
  'transaction_type_id',
  'source',
] as const satisfies readonly (keyof VatTransactionRequest)[];

export const amountsOf = (b: Pick<VatTransactionRequest, 'net' | 'vat' | 'gross'>): Amounts => ({
  net: new Money(b.net),
  vat: new Money(b.vat),
  gross: new Money(b.gross),
});
const plus = (a: Amounts, b: Amounts): Amounts => ({ net: a.net.plus(b.net), vat: a.vat.plus(b.vat), gross: a.gross.plus(b.gross) });
const minus = (a: Amounts, b: Amounts): Amounts => ({ net: a.net.minus(b.net), vat: a.vat.minus(b.vat), gross: a.gross.minus(b.gross) });
const NONE: Amounts = { net: ZERO, vat: ZERO, gross: ZERO };
const isZero = (a: Amounts) => a.net.isZero() && a.vat.isZero() && a.gross.isZero();
export const money2 = (d: Decimal): string => formatMoney(d, 2);

/** The invoice number of the k-th supplementary submission of a part: `INV-1 (supplement 1)`. */
export const supplementNumber = (base: string, k: number): string => `${base} (supplement ${k})`;

interface FiledPart {
  base: VatTransactionRequest;
  supplements: number;
  total: Amounts;
}

/** The filed parts of a record, each with its supplements added up. */
function filedParts(filed: readonly FiledSubmission[]): Map<string, FiledPart> {
  const parts = new Map<string, FiledPart>();
  const byNumber = new Map<string, FiledPart>();
  for (const f of filed.filter((s) => s.supplementOf === undefined)) {
    const part = { base: f.body, supplements: 0, total: amountsOf(f.body) };
    parts.set(partKey(f.body), part);
    byNumber.set(numberKey(f.body.entity_jurisdiction, f.body.invoice_number), part);
  }
  for (const f of filed.filter((s) => s.supplementOf !== undefined)) {
    const part = byNumber.get(numberKey(f.body.entity_jurisdiction, f.supplementOf!));
    if (part === undefined) continue;
    part.supplements += 1;
    part.total = plus(part.total, amountsOf(f.body));
  }
  return parts;
}

/** Decides, part by part, what the invoice's current mapping means for what is filed. */
export function planVat(input: VatPlanInput): VatPlan {
  const parts = filedParts(input.filed);
  const taken = new Set(input.filed.map((f) => numberKey(f.body.entity_jurisdiction, f.body.invoice_number)));
  const plan: VatPlan = { submit: [], withdraw: [], corrections: [], unchanged: [] };
  const seen = new Set<string>();

  for (const target of input.target) {
    const key = partKey(target);
    const part = parts.get(key);
    if (part === undefined) {
      // A part that was never filed: a new positive VAT transaction of its own. Its number is the
      // mapped one unless a filed part holds it (a rate changed): then the part's split number.
      let number = target.invoice_number;
      if (taken.has(numberKey(target.entity_jurisdiction, number))) number = `${number} (${target.vat_rate}% ${target.vat_rate_type})`;
      taken.add(numberKey(target.entity_jurisdiction, number));
      plan.submit.push({ body: { ...target, invoice_number: number } });
      continue;
    }
    seen.add(key);
    const changed: FieldErrors = {};
    for (const field of FACT_FIELDS) {
      if (part.base[field] !== target[field]) {
        (changed[field] ??= []).push(`${part.base.invoice_number}: filed ${String(part.base[field] ?? '(none)')}, now ${String(target[field] ?? '(none)')}`);
      }
    }
    const now = amountsOf(target);
    const difference = minus(now, part.total);
    const factsSame = Object.keys(changed).length === 0;
    if (factsSame && isZero(difference)) {
      plan.unchanged.push(part.base.invoice_number);
      continue;
    }
    if (factsSame && input.increases === 'supplement' && difference.net.greaterThan(0) && !difference.vat.isNegative()) {
      const supplement = input.check({
        ...target,
        invoice_number: supplementNumber(part.base.invoice_number, part.supplements + 1),
        net: money2(difference.net),
        vat: money2(difference.vat),
        gross: money2(difference.gross),
      });
      if (supplement.ok) {
        plan.submit.push({ body: supplement.body, supplementOf: part.base.invoice_number });
        continue;
      }
    }
    plan.corrections.push(correction(part, now, changed, reasonFor(difference, factsSame, input.increases)));
  }

  for (const [key, part] of parts) {
    if (seen.has(key)) continue;
    const reason =
      input.target.length === 0
        ? (input.reason ?? 'the invoice no longer carries VAT')
        : `the invoice no longer has a ${part.base.vat_rate}% ${part.base.vat_rate_type} part`;
    plan.corrections.push(correction(part, NONE, {}, reason));
  }

  const submitted = new Set(plan.submit.map((s) => numberKey(s.body.entity_jurisdiction, s.body.invoice_number)));
  for (const claim of input.claimed) {
    if (claim.state === 'pending' && !submitted.has(numberKey(claim.entityJurisdiction, claim.invoiceNumber))) {
      plan.withdraw.push({ entityJurisdiction: claim.entityJurisdiction, invoiceNumber: claim.invoiceNumber });
    }
  }
  return plan;
}

function reasonFor(difference: Amounts, factsSame: boolean, increases: 'manual' | 'supplement'): string {
  if (!factsSame) return 'the invoice changed after its VAT was filed';
  if (difference.net.isNegative() || difference.vat.isNegative()) return 'the invoice was reduced after its VAT was filed (a negative submission is not possible)';
  return increases === 'manual'
    ? 'the invoice was increased after its VAT was filed (vat.increases is "manual")'
    : 'the invoice was increased after its VAT was filed, and the difference is not a valid submission of its own';
}

function correction(part: FiledPart, now: Amounts, changed: FieldErrors, reason: string): PartCorrection {
  return {
    number: part.base.invoice_number,
    entityJurisdiction: part.base.entity_jurisdiction,
    reportingPeriod: part.base.reporting_period,
    currency: part.base.currency,
    filed: part.total,
    now,
    difference: minus(now, part.total),
    changed,
    reason,
  };
}

/**
 * A refund (credit note) of an invoice whose VAT is filed: the VAT it takes back, for the
 * operator to correct. The refund's own tax when it states it, else the VAT of the filed rate
 * (one part only), half-up to the cent.
 */
export function refundCorrection(refund: RefundData, filed: readonly FiledSubmission[], reason: string): PartCorrection {
  const bases = filed.filter((f) => f.supplementOf === undefined).map((f) => f.body);
  const first = bases[0];
  const number = bases.map((b) => b.invoice_number).join(' + ') || '(no filed submission)';
  const net = roundMoney(refund.amount, 2);
  const rate = bases.length === 1 && first !== undefined ? new Money(first.vat_rate) : undefined;
  const vat = refund.tax_amount !== undefined ? roundMoney(refund.tax_amount, 2) : rate !== undefined ? roundMoney(net.times(rate).dividedBy(100), 2) : ZERO;
  const taken: Amounts = { net, vat, gross: net.plus(vat) };
  const filedTotal = filed.reduce((sum, f) => plus(sum, amountsOf(f.body)), NONE);
  return {
    number,
    entityJurisdiction: first?.entity_jurisdiction ?? '',
    reportingPeriod: first?.reporting_period ?? '',
    currency: first?.currency ?? refund.currency,
    filed: filedTotal,
    now: minus(filedTotal, taken),
    difference: minus(NONE, taken),
    changed: {},
    reason:
      refund.tax_amount === undefined && rate === undefined
        ? `${reason}; the refund states no tax and the invoice has several rates: work out its VAT per rate`
        : reason,
  };
}

/**
 * The dead letter's message and fields for corrections: `net`, `vat` and `gross` each list
 * `<number>: <difference>` (2 decimals, signed), `invoice_number` what was filed and what is
 * required now, and every changed fact under its field.
 */
export function describeCorrections(what: string, corrections: readonly PartCorrection[]): { message: string; fields: FieldErrors } {
  const fields: FieldErrors = {};
  const add = (field: string, message: string) => (fields[field] ??= []).push(message);
  const lines: string[] = [];
  for (const c of corrections) {
    for (const field of AMOUNT_FIELDS) add(field, `${c.number}: ${money2(c.difference[field])}`);
    const where = `entity jurisdiction ${c.entityJurisdiction}, reporting period ${c.reportingPeriod}, ${c.currency}`;
    const filed = `net ${money2(c.filed.net)} vat ${money2(c.filed.vat)} gross ${money2(c.filed.gross)}`;
    const now = `net ${money2(c.now.net)} vat ${money2(c.now.vat)} gross ${money2(c.now.gross)}`;
    add('invoice_number', `${c.number} (${where}): filed ${filed}; now ${now}: ${c.reason}`);
    for (const [field, messages] of Object.entries(c.changed)) for (const m of messages) add(field, m);
    lines.push(
      `${c.number} (${where}): correct by net ${money2(c.difference.net)}, vat ${money2(c.difference.vat)}, gross ${money2(c.difference.gross)} — ${c.reason}`,
    );
  }
  return {
    message:
      `${what} needs a manual correction of the VAT filing: ${lines.join('; ')}. The VAT service takes only a positive net and ` +
      'has no correction or void endpoint: correct the return of that reporting period by hand, then discard this entry ' +
      '(a newer VAT_CORRECTION_REQUIRED entry of the same record states the whole difference and supersedes this one)',
    fields,
  };
}
