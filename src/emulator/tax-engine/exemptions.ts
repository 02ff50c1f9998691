import { randomUUID } from 'node:crypto';
import { ExemptionBody as ExemptionRequest, type ExemptionBody } from '../contract/tax-requests.js';
import { created, errorAnswer, noContent, ok, type RecordRef } from '../answer.js';
import { isoNow } from '../clock.js';
import { cursorPage, parsePageQuery } from '../paging.js';
import { defineEndpoint, type RouteContext } from '../routing.js';
import type { ExemptionRecord, EmulatorState } from '../state.js';
import type { ExemptionEffect } from './calculate.js';
import type { TaxLocation } from './geocode.js';
import { varyExemption, varyPage } from '../variety/tax.js';
import { notFound, parseTaxBody } from './validation.js';


const exemptionRef = (id: string): RecordRef => ({ kind: 'exemption', key: `exemption:${id}`, id });

/** Where and when a transaction happens, for exemption checks. */
export interface ExemptionScope {
  location: TaxLocation | undefined;
  /** The transaction date, `YYYY-MM-DD`. */
  date: string;
}

/**
 * Whether `exemption` is in force: active, same country, a listed jurisdiction (state code,
 * `US-CA` form or state name; none listed = the whole country) and `date` within
 * start_date..end_date inclusive (end_date null = no end).
 */
export function exemptionApplies(exemption: ExemptionRecord, scope: ExemptionScope): boolean {
  const { location, date } = scope;
  if (exemption.exemption_status !== 'active' || location?.country === undefined) return false;
  if (exemption.country !== location.country) return false;
  if (date < exemption.start_date || (exemption.end_date !== null && date > exemption.end_date)) return false;
  if (exemption.jurisdictions.length === 0) return true;
  const names = [location.stateCode, location.stateCode && `${location.country}-${location.stateCode}`, location.state?.name]
    .filter((n): n is string => typeof n === 'string')
    .map((n) => n.toUpperCase());
  return exemption.jurisdictions.some((j) => names.includes(j.trim().toUpperCase()));
}

/** The customer's exemption in force for the transaction, a full one before a partial one. */
export function customerExemption(state: EmulatorState, customerId: string, scope: ExemptionScope): ExemptionEffect | undefined {
  const applicable = state.exemptions.live().filter((e) => e.value.customer_id === customerId && exemptionApplies(e.value, scope));
  const chosen = applicable.find((e) => e.value.exemption_type === 'full') ?? applicable[0];
  return chosen === undefined ? undefined : { kind: chosen.value.exemption_type, exemptionId: chosen.id };
}

export function registerExemptionRoutes(ctx: RouteContext): void {
  const { state, clock, variety } = ctx;
  // Exemptions have no key of their own: their draws follow the order they were created in.
  const render = (e: ExemptionRecord) => varyExemption(e, variety.dice(`exemption#${state.exemptions.getAny(e.id)?.seq ?? e.id}`));

  const validate = (body: unknown) => {
    const parsed = parseTaxBody(ExemptionRequest, body, 'exemption');
    if (!parsed.ok) return parsed;
    const value = parsed.value;
    if (value.end_date != null && value.end_date < value.start_date) {
      return { ok: false as const, answer: errorAnswer(400, 'invalid exemption', { end_date: [`end_date ${value.end_date} is before start_date ${value.start_date}`] }) };
    }
    if (state.customers.get(value.customer_id) === undefined) {
      return { ok: false as const, answer: errorAnswer(422, 'unknown customer', { customer_id: [`no customer with id ${value.customer_id}`] }) };
    }
    return parsed;
  };
  const record = (value: ExemptionBody, id: string, createdAt: string, now: string): ExemptionRecord => ({
    id,
    customer_id: value.customer_id,
    country: value.country,
    jurisdictions: value.jurisdictions ?? [],
    start_date: value.start_date,
    end_date: value.end_date ?? null,
    ...(value.certificate_id === undefined ? {} : { certificate_id: value.certificate_id }),
    exemption_type: value.exemption_type,
    exemption_status: value.exemption_status ?? 'active',
    created_at: createdAt,
    updated_at: now,
  });

  defineEndpoint(ctx, 'exemptions.list', (req) => {
    const query = parsePageQuery(req.query);
    if (!query.ok) return errorAnswer(400, 'invalid list query', query.fields);
    return ok(varyPage(cursorPage(state.exemptions.live(), query.query, render), variety.dice('list:exemptions'), '/v1/exemptions/'));
  });

  defineEndpoint(ctx, 'exemptions.create', (req) => {
    const parsed = validate(req.body);
    if (!parsed.ok) return parsed.answer;
    const id = randomUUID();
    const now = isoNow(clock);
    const entry = state.exemptions.insert(id, record(parsed.value, id, now, now));
    return { ...created(render(entry.value)), record: exemptionRef(id) };
  });

  const withId = { record: (req: { params: Record<string, string> }) => (req.params.id === undefined ? undefined : exemptionRef(req.params.id)) };

  defineEndpoint(ctx, 'exemptions.get', (req) => {
    const entry = state.exemptions.get(req.params.id ?? '');
    return entry ? ok(render(entry.value)) : notFound(`exemption ${req.params.id}`);
  }, withId);

  defineEndpoint(ctx, 'exemptions.update', (req) => {
    const entry = state.exemptions.get(req.params.id ?? '');
    if (entry === undefined) return notFound(`exemption ${req.params.id}`);
    const parsed = validate(req.body);
    if (!parsed.ok) return parsed.answer;
    entry.value = record(parsed.value, entry.id, entry.value.created_at, isoNow(clock));
    return ok(render(entry.value));
  }, withId);

  defineEndpoint(ctx, 'exemptions.delete', (req) => {
    return state.exemptions.softDelete(req.params.id ?? '') ? noContent() : notFound(`exemption ${req.params.id}`);
  }, withId);
}
