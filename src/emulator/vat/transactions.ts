import { randomUUID } from 'node:crypto';
import { errorAnswer, mergeFields, ok, type RecordRef } from '../answer.js';
import { isoNow, today } from '../clock.js';
import type { VatTransactionRecord } from '../state.js';
import { defineEndpoint, type RouteContext } from '../routing.js';
import { VAT_TRANSACTION_TYPES } from './reference-data.js';
import { validateVatSubmission } from './validation.js';
import { varyTransactionType, varyVatTransaction } from '../variety/vat.js';


export const vatKey = (entityJurisdiction: string, invoiceNumber: string) => `${entityJurisdiction}|${invoiceNumber}`;

const vatRef = (body: unknown): RecordRef | undefined => {
  if (typeof body !== 'object' || body === null) return undefined;
  const { entity_jurisdiction: ej, invoice_number: number } = body as Record<string, unknown>;
  if (typeof ej !== 'string' || typeof number !== 'string') return undefined;
  return { kind: 'vat', key: `vat:${ej}:${encodeURIComponent(number.trim())}` };
};

export function registerVatTransactionRoutes(ctx: RouteContext): void {
  const { state, clock, settings, variety } = ctx;
  const types = new Map(VAT_TRANSACTION_TYPES.map((t) => [t.id, t]));

  const submit = (body: unknown) => {
    const result = validateVatSubmission(body, {
      today: today(clock),
      tolerance: settings.vatTolerance,
      types,
      isDuplicate: (ej, number) => state.vatTransactions.getByKey(vatKey(ej, number)) !== undefined,
      isKnownEntityJurisdiction: (id) => state.entityJurisdictions.has(id),
    });
    if (!result.ok) return errorAnswer(result.status, result.error, result.details);
    const warnings = mergeFields(result.validity, result.compliance);
    const withWarnings = Object.keys(warnings).length > 0;
    const id = randomUUID();
    const record: VatTransactionRecord = {
      ...result.value,
      id,
      validity_status: Object.keys(result.validity).length > 0 ? 'warning' : 'valid',
      compliance_status: Object.keys(result.compliance).length > 0 ? 'warning' : 'valid',
      committed: true,
      created_at: isoNow(clock),
      ...(withWarnings ? { warnings } : {}),
    };
    state.vatTransactions.insert(id, record, vatKey(record.entity_jurisdiction, record.invoice_number));
    // Drawn by invoice number and, once registered, the entity and jurisdiction: stable across runs.
    const ej = state.entityJurisdictions.get(record.entity_jurisdiction);
    const dice = variety.dice(`vat:${ej === undefined ? record.entity_jurisdiction : `${ej.entity}:${ej.taxable_jurisdiction}`}:${record.invoice_number}`);
    return { status: withWarnings ? 200 : 201, body: varyVatTransaction(record, dice), record: { kind: 'vat' as const, key: vatRef(record)?.key ?? '', id } };
  };

  defineEndpoint(ctx, 'vat.submit', (req) => submit(req.body), { record: (req) => vatRef(req.body) });
  // "A reference to the create operation also shows the suffix /create" (vat-compliance-api.md).
  for (const suffix of ['create', 'create/']) {
    ctx.define({
      endpoint: 'vat.submit',
      method: 'POST',
      path: `/api/${settings.vatModule}/v1/transactions/${suffix}`,
      handler: (req) => submit(req.body),
      record: (req) => vatRef(req.body),
    });
  }

  defineEndpoint(ctx, 'vat.types', () =>
    ok({
      count: VAT_TRANSACTION_TYPES.length,
      next: null,
      previous: null,
      results: VAT_TRANSACTION_TYPES.map(({ id, name, description }) => varyTransactionType({ id, name, description }, variety.dice(`type:${id}`))),
    }),
  );
}
