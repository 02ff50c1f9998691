import type { Dice } from './dice.js';
import { decimalsFor, extrasFor, isObject, nullsFor, type Json } from './shape.js';

/**
 * The VAT service's answers with the variety of a real service (docs/emulator.md, "Variety").
 * Never varied: ids, invoice numbers, amounts' values, HTTP statuses, and what a status means — an
 * added compliance value stands only for `valid`, never for `warning` or `error`.
 */

export function varyVatTransaction(canonical: object, dice: Dice): Json {
  const out = structuredClone(canonical) as Json;
  nullsFor(out, ['vat_number'], dice);
  decimalsFor(out, ['net', 'vat', 'gross', 'vat_rate'], dice, 'vat');
  // Compliance checks a later version runs after answering: "pending_review" until then.
  if (dice.on('enums') && out.compliance_status === 'valid') out.compliance_status = 'pending_review';
  extrasFor(out, { object: 'vat_transaction', updated_at: out.created_at, _links: { self: { href: `/api/vat/v1/transactions/${String(out.id)}/` } } }, dice);
  return out;
}

export function varyTransactionType(canonical: object, dice: Dice): Json {
  const out = { ...canonical } as Json;
  extrasFor(out, { code: String(out.name).toUpperCase().replace(/\W+/g, '_'), is_active: true }, dice);
  return out;
}

export function varyRegistration(canonical: object, dice: Dice): Json {
  const out = structuredClone(canonical) as Json;
  // number, number_local and fiscal_code are "" when not supplied (the document); iban is not said.
  if (dice.on('nulls') && out.iban === '') out.iban = null;
  // Closing is under way while date_registration_closed lies ahead: a status added later.
  if (dice.on('enums') && out.status === 'active' && typeof out.date_registration_closed === 'string') {
    out.status = 'deregistration_pending';
    out.status_display = 'Deregistration pending';
  }
  if (isObject(out.taxable_jurisdiction_detail)) extrasFor(out.taxable_jurisdiction_detail, { level: String(out.taxable_jurisdiction_detail.iso).includes('-') ? 'subdivision' : 'country' }, dice);
  if (isObject(out.entity_detail)) extrasFor(out.entity_detail, { legal_name: null }, dice);
  extrasFor(out, { object: 'registration', notes: null, _links: { self: { href: `/registrations/v1/registrations/${String(out.id)}/` } } }, dice);
  return out;
}

export function varyRegistrationPage(page: Json, dice: Dice): Json {
  const out = { ...page };
  extrasFor(out, { page_size: Array.isArray(page.results) ? page.results.length : null }, dice);
  return out;
}

export function varyFiling(canonical: object, dice: Dice): Json {
  const out = structuredClone(canonical) as Json;
  decimalsFor(out, ['total_vat_due', 'total_net'], dice, 'filing');
  if (dice.on('omissions')) for (const field of ['submitted_date', 'filing_reference']) if (out[field] === null) delete out[field];
  // A draft being prepared: a finer status a later version shows for `draft`.
  if (dice.on('enums') && out.status === 'draft') out.status = 'in_preparation';
  extrasFor(out, { object: 'filing', authority_reference: null, _links: { self: { href: `/api/filing/v1/filings/${String(out.id)}/` } } }, dice);
  return out;
}

export function varyFilingFile(canonical: object, dice: Dice): Json {
  const out = { ...canonical } as Json;
  extrasFor(out, { content_type: String(out.filename).endsWith('.pdf') ? 'application/pdf' : 'application/json', size_bytes: null }, dice);
  return out;
}

export function varyBoxes(canonical: { boxes: object[] } & Json, dice: Dice): Json {
  const out = structuredClone(canonical) as Json & { boxes: Json[] };
  decimalsFor(out, ['total_vat_due'], dice, 'boxes');
  out.boxes.forEach((box, i) => {
    decimalsFor(box, ['value'], dice, `boxes[${i}]`);
    extrasFor(box, { editable: false }, dice);
  });
  extrasFor(out, { generated_at: null }, dice);
  return out;
}
