import { randomUUID } from 'node:crypto';
import { CustomerBody, withSources, type InlineCustomerBody } from '../contract/tax-requests.js';
import { created, errorAnswer, noContent, ok, type RecordRef } from '../answer.js';
import { isoNow } from '../clock.js';
import { defineEndpoint, type RouteContext } from '../routing.js';
import { cursorPage, parsePageQuery } from '../paging.js';
import type { CustomerRecord, EmulatorState } from '../state.js';
import { sourceKey, type Entry } from '../store.js';
import { varyCustomer, varyPage } from '../variety/tax.js';
import { notFound, parseTaxBody } from './validation.js';


/** The key of a customer's variety draws: its (source, external_id), stable across runs. */
export const customerVarietyKey = (c: { source: string; external_id: string }) => `customer:${sourceKey(c.source, c.external_id)}`;

export const customerRef = (source: string, externalId: string, id?: string): RecordRef => ({
  kind: 'customer',
  key: `customer:${sourceKey(source, externalId)}`,
  ...(id === undefined ? {} : { id }),
});

/**
 * Upsert by (source, external_id): a new key gets a new UUID; a repeat replaces the writable fields
 * of the same record (PUT semantics: an omitted field is cleared). A soft-deleted key starts over.
 */
export function upsertCustomer(state: EmulatorState, body: CustomerBody, now: string): { entry: Entry<CustomerRecord>; created: boolean } {
  const key = sourceKey(body.source, body.external_id);
  const existing = state.customers.getByKey(key);
  if (existing !== undefined) {
    existing.value = { ...body, id: existing.id, created_at: existing.value.created_at, updated_at: now };
    return { entry: existing, created: false };
  }
  const id = randomUUID();
  return { entry: state.customers.insert(id, { ...body, id, created_at: now, updated_at: now }, key), created: true };
}

/** The inline customer of a transaction: created when new, else only the fields it carries change. */
export function upsertInlineCustomer(state: EmulatorState, inline: InlineCustomerBody, now: string): Entry<CustomerRecord> {
  const existing = state.customers.getByKey(sourceKey(inline.source, inline.external_id));
  if (existing === undefined) return upsertCustomer(state, inline, now).entry;
  existing.value = { ...existing.value, ...inline, updated_at: now };
  return existing;
}

export function registerCustomerRoutes(ctx: RouteContext): void {
  const { state, clock, variety } = ctx;
  const schema = withSources(CustomerBody, ctx.settings.sources);
  const render = (c: CustomerRecord) => varyCustomer(c, variety.dice(customerVarietyKey(c)));
  const byId = (id: string | undefined) => (id === undefined ? undefined : state.customers.get(id));
  const byKey = (p: Record<string, string>) => state.customers.getByKey(sourceKey(p.source ?? '', p.external_id ?? ''));
  const refOf = (e: Entry<CustomerRecord> | undefined) => (e === undefined ? undefined : customerRef(e.value.source, e.value.external_id, e.id));
  const keyNotFound = (p: Record<string, string>) => notFound(`customer with source ${p.source} and external_id ${p.external_id}`);

  defineEndpoint(ctx, 'customers.list', (req) => {
    const query = parsePageQuery(req.query);
    if (!query.ok) return errorAnswer(400, 'invalid list query', query.fields);
    return ok(varyPage(cursorPage(state.customers.live(), query.query, render), variety.dice('list:customers'), '/v1/customers/'));
  });

  defineEndpoint(
    ctx,
    'customers.upsert',
    (req) => {
      const parsed = parseTaxBody(schema, req.body, 'customer');
      if (!parsed.ok) return parsed.answer;
      const result = upsertCustomer(state, parsed.value, isoNow(clock));
      const body = render(result.entry.value);
      const answer = result.created ? created(body) : ok(body);
      return { ...answer, record: refOf(result.entry) };
    },
    { record: (req) => keyFromBody(req.body, customerRef) },
  );

  defineEndpoint(ctx, 'customers.get', (req) => {
    const entry = byId(req.params.id);
    return entry ? ok(render(entry.value)) : notFound(`customer ${req.params.id}`);
  }, { record: (req) => refOf(byId(req.params.id)) });

  defineEndpoint(ctx, 'customers.getByKey', (req) => {
    const entry = byKey(req.params);
    return entry ? ok(render(entry.value)) : keyNotFound(req.params);
  }, { record: (req) => customerRef(req.params.source ?? '', req.params.external_id ?? '') });

  defineEndpoint(ctx, 'customers.delete', (req) => {
    return req.params.id !== undefined && state.customers.softDelete(req.params.id) ? noContent() : notFound(`customer ${req.params.id}`);
  }, { record: (req) => refOf(byId(req.params.id)) });

  defineEndpoint(ctx, 'customers.deleteByKey', (req) => {
    const entry = byKey(req.params);
    return entry !== undefined && state.customers.softDelete(entry.id) ? noContent() : keyNotFound(req.params);
  }, { record: (req) => customerRef(req.params.source ?? '', req.params.external_id ?? '') });

  rejectPathUpserts(ctx, 'customers');
}

/** The record key of an upsert body, when it has one. */
export function keyFromBody(body: unknown, make: (source: string, externalId: string) => RecordRef): RecordRef | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { source, external_id: externalId } = body as { source?: unknown; external_id?: unknown };
  return typeof source === 'string' && typeof externalId === 'string' ? make(source, externalId) : undefined;
}

/**
 * The earlier API upserted by path. A PUT to `/v1/{resource}/{source}/{external_id}` (or to
 * `/{id}`) is answered 400 with the way to do it, instead of a bare 404.
 */
export function rejectPathUpserts(ctx: RouteContext, resource: 'customers' | 'transactions'): void {
  const message =
    `PUT /v1/${resource}/{source}/{external_id} is not an upsert: send PUT /v1/${resource}/ with source and external_id in the body ` +
    '(path-based upserts belong to the removed earlier API; changing source in a path would create a duplicate record)';
  for (const path of [`/v1/${resource}/:source/:external_id`, `/v1/${resource}/:id`]) {
    ctx.define({
      endpoint: `${resource}.pathUpsert`,
      method: 'PUT',
      path,
      handler: () => errorAnswer(400, message, { path: [message] }),
    });
  }
}
