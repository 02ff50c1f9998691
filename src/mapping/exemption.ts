import { Uuid } from '../api/schemas/common.js';
import { ExemptionRequest, type ExemptionStatus } from '../api/schemas/tax-engine.js';
import type { ExemptionData } from '../domain/events.js';
import { checked, ignore, invalid, wait, wrongKind, type MapResult, type MappingContext } from './result.js';

export interface ExemptionContext extends MappingContext {
  /** The tax engine's id of the exemption's customer (same source); absent: the exemption waits. */
  customerId?: string;
}

export interface ExemptionCancelContext extends ExemptionContext {
  /** The exemption data taxsync last held for this record (from its state store), when any. */
  previous?: ExemptionData;
}

/**
 * exemption.upserted → body of `POST /v1/exemptions/` (first time) or `PUT /v1/exemptions/{id}`.
 * Exemptions have no (source, external_id) key in the tax engine and the request schema has no
 * such fields, so the body cannot carry them: the processor keeps record key → engine id.
 */
export function mapExemption(data: ExemptionData, ctx: ExemptionContext): MapResult<ExemptionRequest> {
  return buildExemption(data, ctx, data.status);
}

/**
 * exemption.cancelled → the previous exemption with exemption_status cancelled. Only the previous
 * data is used: a cancellation's own data is a partial object that the canonical schema fills with
 * defaults (jurisdictions [], end_date null, status active) indistinguishable from stated values,
 * so laying it over the previous data could widen the exemption's scope. Never held → ignored.
 */
export function mapExemptionCancelled(_data: Partial<ExemptionData>, ctx: ExemptionCancelContext): MapResult<ExemptionRequest> {
  if (ctx.previous === undefined) {
    return ignore(`exemption ${ctx.key.external_id} was cancelled, but taxsync never held it (it was never sent): nothing to cancel in the tax engine`);
  }
  return buildExemption(ctx.previous, ctx, 'cancelled');
}

function buildExemption(data: ExemptionData, ctx: ExemptionContext, status: ExemptionStatus): MapResult<ExemptionRequest> {
  const what = `exemption ${ctx.key.external_id}`;
  const kind = wrongKind(ctx.key, 'exemption', what);
  if (kind !== undefined) return kind;
  if (ctx.customerId === undefined) {
    return wait(`${what} waits for its customer ${data.customer_external_id} (source ${ctx.key.source}) to exist in the tax engine`);
  }
  // ISO dates compare correctly as strings.
  if (data.end_date !== null && data.end_date < data.start_date) {
    return invalid(what, { end_date: [`${data.end_date} is before start_date ${data.start_date}`] });
  }

  const notes: string[] = [];
  const certificate = data.certificate_id;
  const certificateIsUuid = certificate !== undefined && Uuid.safeParse(certificate).success;
  if (certificate !== undefined && !certificateIsUuid) {
    notes.push(`certificate_id ${JSON.stringify(certificate)} not sent: the tax engine takes a UUID there`);
  }
  const body = {
    customer_id: ctx.customerId,
    country: data.country,
    jurisdictions: data.jurisdictions,
    start_date: data.start_date,
    end_date: data.end_date,
    ...(certificateIsUuid ? { certificate_id: certificate } : {}),
    exemption_type: data.exemption_type,
    exemption_status: status,
  };
  const result = checked(ExemptionRequest, body, what);
  if (!result.ok) return result.result;
  return { kind: 'send', body: result.body, ...(notes.length === 0 ? {} : { notes }) };
}
