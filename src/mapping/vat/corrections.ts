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
 *
 * An invoice's entity jurisdiction is fixed once a submission of it may have landed (DESIGN.md
 * invariant 5, as invariant 3 fixes a record's source): a later version that maps to another one
 * (its registration closed and replaced, resolved again; the ERP naming another) is compared with
 * what is filed where it was filed, and nothing more is submitted for it — a change is stated
 * there for the operator (docs/decisions.md, "An invoice's entity jurisdiction after filing").
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

/** The correction of one filed submission (a part's first submission, or one of its supplements). */
export interface SubmissionCorrection {
  /** The invoice number it was filed under. */
  number: string;
  entityJurisdiction: string;
  reportingPeriod: string;
  /** What that submission filed. */
  filed: Amounts;
  /** What the operator adds to (or, negative, takes off) that submission in the filing. */
  difference: Amounts;
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
  /**
   * The difference stated per filed submission (they add up to `difference`): a reduction is
   * taken off the newest submission first (a supplement before the part it supplements), never
   * more than a submission filed; an increase is added to the part's first submission.
   */
  submissions: SubmissionCorrection[];
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
  /**
   * The invoice maps to an entity jurisdiction it was not filed under (`now`): it was compared
   * with what is filed (`filed`), and nothing was planned for submission.
   */
  kept?: { filed: string[]; now: string[] };
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
  /** The base first, then its supplements in the order they were filed. */
  submissions: VatTransactionRequest[];
  total: Amounts;
}

const supplementIndex = (number: string): number => Number(/\(supplement (\d+)\)$/.exec(number)?.[1] ?? 0);

/** The filed parts of a record, each with its supplements added up. */
function filedParts(filed: readonly FiledSubmission[]): Map<string, FiledPart> {
  const parts = new Map<string, FiledPart>();
  const byNumber = new Map<string, FiledPart>();
  for (const f of filed.filter((s) => s.supplementOf === undefined)) {
    const part = { base: f.body, supplements: 0, submissions: [f.body], total: amountsOf(f.body) };
    parts.set(partKey(f.body), part);
    byNumber.set(numberKey(f.body.entity_jurisdiction, f.body.invoice_number), part);
  }
  for (const f of filed.filter((s) => s.supplementOf !== undefined)) {
    const part = byNumber.get(numberKey(f.body.entity_jurisdiction, f.supplementOf!));
    if (part === undefined) continue;
    part.supplements += 1;
    part.submissions.push(f.body);
    part.total = plus(part.total, amountsOf(f.body));
  }
  for (const part of parts.values()) {
    const [base, ...supplements] = part.submissions;
    part.submissions = [base!, ...supplements.sort((a, b) => supplementIndex(a.invoice_number) - supplementIndex(b.invoice_number))];
  }
  return parts;
}

/**
 * Whether the invoice now maps to an entity jurisdiction it was not filed under, and the bodies to
 * compare with what is filed: under the one it was filed under (when there is one).
 */
function keepJurisdiction(input: VatPlanInput): { target: readonly VatTransactionRequest[]; kept?: { filed: string[]; now: string[] } } {
  const filed = [...new Set(input.filed.map((f) => f.body.entity_jurisdiction))].sort();
  const now = [...new Set(input.target.map((t) => t.entity_jurisdiction).filter((ej) => filed.length > 0 && !filed.includes(ej)))].sort();
  if (now.length === 0) return { target: input.target };
  const [only] = filed;
  const target = filed.length === 1 && only !== undefined ? input.target.map((t) => ({ ...t, entity_jurisdiction: only })) : input.target;
  return { target, kept: { filed, now } };
}

/** Decides, part by part, what the invoice's current mapping means for what is filed. */
export function planVat(input: VatPlanInput): VatPlan {
  const parts = filedParts(input.filed);
  const taken = new Set(input.filed.map((f) => numberKey(f.body.entity_jurisdiction, f.body.invoice_number)));
  const { target: targets, kept } = keepJurisdiction(input);
  const plan: VatPlan = { submit: [], withdraw: [], corrections: [], unchanged: [], ...(kept === undefined ? {} : { kept }) };
  const seen = new Set<string>();
  const keptWhy =
    kept === undefined
      ? ''
      : `; the invoice now maps to entity jurisdiction ${kept.now.join(', ')}, but its VAT was filed under ${kept.filed.join(', ')} and stays there: ` +
        'taxsync submits nothing more for it (if the supply itself moved to another registration, reverse it there and declare it under the new one by hand)';

  for (const target of targets) {
    const key = partKey(target);
    const part = parts.get(key);
    if (part === undefined) {
      // A part that was never filed: a new positive VAT transaction of its own. Its number is the
      // mapped one unless a filed part holds it (a rate changed): then the part's split number.
      let number = target.invoice_number;
      if (taken.has(numberKey(target.entity_jurisdiction, number))) number = `${number} (${target.vat_rate}% ${target.vat_rate_type})`;
      taken.add(numberKey(target.entity_jurisdiction, number));
      if (kept === undefined) plan.submit.push({ body: { ...target, invoice_number: number } });
      else plan.corrections.push(unfiledPart({ ...target, invoice_number: number }, `the invoice now has a ${target.vat_rate}% ${target.vat_rate_type} part that is not filed${keptWhy}`));
      continue;
    }
    seen.add(key);
    const changed: FieldErrors = {};
    if (kept !== undefined) (changed.entity_jurisdiction ??= []).push(`${part.base.invoice_number}: filed ${part.base.entity_jurisdiction}, now ${kept.now.join(', ')} (kept where it was filed)`);
    // Per filed submission: a supplement carries the facts too, and is corrected with its part.
    for (const field of FACT_FIELDS) {
      for (const filed of part.submissions) {
        if (filed[field] !== target[field]) {
          (changed[field] ??= []).push(`${filed.invoice_number}: filed ${String(filed[field] ?? '(none)')}, now ${String(target[field] ?? '(none)')}`);
        }
      }
    }
    const now = amountsOf(target);
    const difference = minus(now, part.total);
    const factsSame = Object.keys(changed).filter((field) => field !== 'entity_jurisdiction').length === 0;
    if (factsSame && isZero(difference)) {
      plan.unchanged.push(part.base.invoice_number);
      continue;
    }
    if (kept === undefined && factsSame && input.increases === 'supplement' && difference.net.greaterThan(0) && !difference.vat.isNegative()) {
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
    plan.corrections.push(correction(part, now, changed, `${reasonFor(difference, factsSame, kept === undefined ? input.increases : 'manual')}${keptWhy}`));
  }

  for (const [key, part] of parts) {
    if (seen.has(key)) continue;
    const reason =
      input.target.length === 0
        ? (input.reason ?? 'the invoice no longer carries VAT')
        : `the invoice no longer has a ${part.base.vat_rate}% ${part.base.vat_rate_type} part${keptWhy}`;
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

/** A part the invoice requires now that is not filed and will not be submitted: stated whole, as an addition. */
function unfiledPart(target: VatTransactionRequest, reason: string): PartCorrection {
  const now = amountsOf(target);
  const where = { number: target.invoice_number, entityJurisdiction: target.entity_jurisdiction, reportingPeriod: target.reporting_period };
  return { ...where, currency: target.currency, filed: NONE, now, difference: now, submissions: [{ ...where, filed: NONE, difference: now }], changed: {}, reason };
}

function reasonFor(difference: Amounts, factsSame: boolean, increases: 'manual' | 'supplement'): string {
  if (!factsSame) return 'the invoice changed after its VAT was filed';
  if (difference.net.isNegative() || difference.vat.isNegative()) return 'the invoice was reduced after its VAT was filed (a negative submission is not possible)';
  return increases === 'manual'
    ? 'the invoice was increased after its VAT was filed (vat.increases is "manual")'
    : 'the invoice was increased after its VAT was filed, and the difference is not a valid submission of its own';
}

/**
 * A part's difference stated per filed submission. A reduction is taken off the newest
 * submission first, each at most what it filed (the first submission takes what is left); an
 * increase is added to the first submission. The lines add up to `difference` exactly.
 */
function perSubmission(submissions: readonly VatTransactionRequest[], difference: Amounts): SubmissionCorrection[] {
  const line = (body: VatTransactionRequest, d: Amounts): SubmissionCorrection => ({
    number: body.invoice_number,
    entityJurisdiction: body.entity_jurisdiction,
    reportingPeriod: body.reporting_period,
    filed: amountsOf(body),
    difference: d,
  });
  const [first, ...supplements] = submissions;
  if (first === undefined) return [];
  if (!(difference.net.isNegative() || (difference.net.isZero() && difference.gross.isNegative()))) return [line(first, difference)];
  const lines: SubmissionCorrection[] = [];
  let left = minus(NONE, difference);
  for (const body of [...supplements].reverse()) {
    if (isZero(left)) break;
    const filed = amountsOf(body);
    const take = left.net.greaterThanOrEqualTo(filed.net) ? filed : left;
    lines.push(line(body, minus(NONE, take)));
    left = minus(left, take);
  }
  if (!isZero(left)) lines.push(line(first, minus(NONE, left)));
  return lines;
}

function correction(part: FiledPart, now: Amounts, changed: FieldErrors, reason: string): PartCorrection {
  const difference = minus(now, part.total);
  return {
    number: part.base.invoice_number,
    entityJurisdiction: part.base.entity_jurisdiction,
    reportingPeriod: part.base.reporting_period,
    currency: part.base.currency,
    filed: part.total,
    now,
    difference,
    submissions: perSubmission(part.submissions, difference),
    changed,
    reason,
  };
}

/** A cancelled refund gives back what its correction took: the same amounts, the other sign. */
export function undoCorrection(c: PartCorrection): PartCorrection {
  const negate = (a: Amounts): Amounts => ({ net: a.net.negated(), vat: a.vat.negated(), gross: a.gross.negated() });
  const difference = negate(c.difference);
  return { ...c, difference, now: plus(c.filed, difference), submissions: c.submissions.map((s) => ({ ...s, difference: negate(s.difference) })) };
}

/**
 * A refund (credit note) of an invoice whose VAT is filed: the VAT it takes back, for the
 * operator to correct. The refund's own tax when it states it, else the VAT of the filed rate,
 * half-up to the cent. It is stated against the part it refunds (the one part, or the one part
 * whose rate reproduces the refund's stated tax), per filed submission of that part; when that
 * cannot be told (several rates, none or several matching), against all of them together, with
 * the reason.
 */
export function refundCorrection(refund: RefundData, filed: readonly FiledSubmission[], reason: string): PartCorrection {
  const parts = [...filedParts(filed).values()];
  const net = roundMoney(refund.amount, 2);
  const statedTax = refund.tax_amount === undefined ? undefined : roundMoney(refund.tax_amount, 2);
  const matching =
    parts.length === 1
      ? parts
      : statedTax === undefined
        ? []
        : parts.filter((p) => roundMoney(net.times(p.base.vat_rate).dividedBy(100), 2).minus(statedTax).abs().lessThanOrEqualTo('0.01'));
  const part = matching.length === 1 ? matching[0] : undefined;
  const rate = part === undefined ? undefined : new Money(part.base.vat_rate);
  const vat = statedTax ?? (rate !== undefined ? roundMoney(net.times(rate).dividedBy(100), 2) : ZERO);
  const taken: Amounts = { net, vat, gross: net.plus(vat) };
  const difference = minus(NONE, taken);
  if (part !== undefined) return correction(part, minus(part.total, taken), {}, reason);
  const bases = parts.map((p) => p.base);
  const first = bases[0];
  const number = bases.map((b) => b.invoice_number).join(' + ') || '(no filed submission)';
  const filedTotal = filed.reduce((sum, f) => plus(sum, amountsOf(f.body)), NONE);
  const where = { entityJurisdiction: first?.entity_jurisdiction ?? '', reportingPeriod: first?.reporting_period ?? '' };
  return {
    number,
    ...where,
    currency: first?.currency ?? refund.currency,
    filed: filedTotal,
    now: minus(filedTotal, taken),
    difference,
    submissions: [{ number, ...where, filed: filedTotal, difference }],
    changed: {},
    reason:
      bases.length > 1
        ? `${reason}; the refund ${statedTax === undefined ? 'states no tax' : 'states a tax that does not tell its rate'} and the invoice has several rates: work out its VAT per rate`
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
  const amounts = (a: Amounts) => `net ${money2(a.net)} vat ${money2(a.vat)} gross ${money2(a.gross)}`;
  for (const c of corrections) {
    // One line per filed submission, so each figure names the filing it corrects.
    for (const s of c.submissions) for (const field of AMOUNT_FIELDS) add(field, `${s.number}: ${money2(s.difference[field])}`);
    const where = `entity jurisdiction ${c.entityJurisdiction}, reporting period ${c.reportingPeriod}, ${c.currency}`;
    const filedAs = c.submissions.length > 1 ? ` (${c.submissions.map((s) => `${s.number} filed ${amounts(s.filed)}`).join(', ')})` : '';
    add('invoice_number', `${c.number} (${where}): filed ${amounts(c.filed)}${filedAs}; now ${amounts(c.now)}: ${c.reason}`);
    for (const [field, messages] of Object.entries(c.changed)) for (const m of messages) add(field, m);
    const by = c.submissions.map((s) => `${c.submissions.length === 1 && s.number === c.number ? '' : `${s.number} `}by net ${money2(s.difference.net)}, vat ${money2(s.difference.vat)}, gross ${money2(s.difference.gross)}`).join('; ');
    lines.push(`${c.number} (${where}): correct ${by} — ${c.reason}`);
  }
  return {
    message:
      `${what} needs a manual correction of the VAT filing: ${lines.join('; ')}. The VAT service takes only a positive net and ` +
      'has no correction or void endpoint: correct the return of that reporting period by hand, then discard this entry ' +
      '(a newer VAT_CORRECTION_REQUIRED entry of the same record states the whole difference and supersedes this one)',
    fields,
  };
}
