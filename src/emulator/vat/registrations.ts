import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Id as Uuid } from '../contract/primitives.js';
import {
  ORDER_BY_VALUES as REGISTRATION_ORDER_FIELDS,
  RegistrationBody as RegistrationCreateRequest,
  type RegistrationBody,
  RegistrationPatchBody as RegistrationPatchRequest,
  type RegistrationState as RegistrationStatus,
} from '../contract/vat-requests.js';
import { detailAnswer, issuesToFields, noContent, ok, parseDetailBody, summariseFields, type Answer, type RecordRef } from '../answer.js';
import { hasPermission, scopedEntities, type RegistrationPermission, type TokenClaims } from '../auth.js';
import { isoNow, today } from '../clock.js';
import { stableUuid } from '../ids.js';
import { defineEndpoint, type EmuRequest, type RouteContext } from '../routing.js';
import type { EntityJurisdiction, RegistrationRecord, EmulatorState } from '../state.js';
import type { Entry } from '../store.js';
import { JURISDICTIONS, displayOf } from './reference-data.js';
import { varyRegistration, varyRegistrationPage } from '../variety/vat.js';



/** The model defaults applied at creation when a field is omitted. */
export const REGISTRATION_DEFAULTS = {
  registration_type: 'standard',
  fiscal_representative_type: 'not_required',
  entity_responsible_for_payment: 'client_manual_payment',
  direct_debit_setup: false,
} as const;

export const MAX_REGISTRATION_PAGE_SIZE = 100;

/** Status from the dates, never stored (vat-compliance-api.md, "Registration status"). */
export function registrationStatus(r: Pick<RegistrationRecord, 'date_of_registration' | 'date_registration_closed'>, day: string): RegistrationStatus {
  if (r.date_registration_closed !== null && r.date_registration_closed <= day) return 'inactive';
  if (r.date_of_registration === null || r.date_of_registration > day) return 'pending';
  return 'active';
}

export const jurisdictionId = (iso: string) => stableUuid(`jurisdiction:${iso}`);

const registrationRef = (id: string): RecordRef => ({ kind: 'registration', key: `registration:${id}`, id });

const CACHE_HEADERS = { 'cache-control': 'private, max-age=300', vary: 'Authorization' };

const ListQuery = z.object({
  number: z.string().optional(),
  entity: Uuid.optional(),
  taxable_jurisdiction: z.string().min(1).optional(),
  entity_jurisdiction: Uuid.optional(),
  order_by: z
    .string()
    .refine((v) => (REGISTRATION_ORDER_FIELDS as readonly string[]).includes(v.replace(/^-/, '')), {
      error: `must be one of ${REGISTRATION_ORDER_FIELDS.join(', ')}, optionally prefixed with - for descending order`,
    })
    .optional(),
  page: z.string().regex(/^[1-9]\d*$/, { error: 'must be a page number from 1' }).optional(),
  page_size: z
    .string()
    .regex(/^\d+$/)
    .refine((v) => Number(v) >= 1 && Number(v) <= MAX_REGISTRATION_PAGE_SIZE, { error: `must be from 1 to ${MAX_REGISTRATION_PAGE_SIZE}` })
    .optional(),
});

export function registerRegistrationRoutes(ctx: RouteContext): void {
  const { state, clock, settings, variety } = ctx;
  const entityNames = new Map(settings.entities.map((e) => [e.id, e.name]));
  const entityName = (r: RegistrationRecord) => entityNames.get(r.entity) ?? `Entity ${r.entity.slice(0, 8)}`;
  // Registrations have no key of their own: their draws follow the order they were created in.
  const render = (r: RegistrationRecord) =>
    varyRegistration(renderRegistration(r, today(clock), entityName(r)), variety.dice(`registration#${state.registrations.getAny(r.id)?.seq ?? r.id}`));
  const forbidden = (permission: RegistrationPermission, entity?: string) =>
    detailAnswer(403, `You do not have permission to perform this action (needs ${permission}${entity === undefined ? '' : ` for entity ${entity}`}).`);
  const mayAtAll = (claims: TokenClaims | undefined, permission: RegistrationPermission) =>
    claims !== undefined && (hasPermission(claims, permission) || scopedEntities(claims, permission).size > 0);
  const notFound = () => detailAnswer(404, 'Not found.');
  const withId = { record: (req: EmuRequest) => (req.params.id === undefined ? undefined : registrationRef(req.params.id)) };

  defineEndpoint(ctx, 'registrations.list', (req) => {
    if (!mayAtAll(req.claims, 'REGISTRATION_VIEW')) return forbidden('REGISTRATION_VIEW');
    return listRegistrations(req);
  });

  defineEndpoint(ctx, 'registrations.create', (req) => {
    if (!mayAtAll(req.claims, 'REGISTRATION_CREATE')) return forbidden('REGISTRATION_CREATE');
    const parsed = parseDetailBody(RegistrationCreateRequest, req.body);
    if (!parsed.ok) return parsed.answer;
    if (!hasPermission(req.claims as TokenClaims, 'REGISTRATION_CREATE', parsed.value.entity)) return forbidden('REGISTRATION_CREATE', parsed.value.entity);
    const now = isoNow(clock);
    const built = build(parsed.value, randomUUID(), now, now);
    if (!built.ok) return built.answer;
    state.registrations.insert(built.record.id, built.record);
    return { status: 201, body: render(built.record), record: registrationRef(built.record.id) };
  });

  const editable = (req: EmuRequest, permission: RegistrationPermission): { ok: true; entry: Entry<RegistrationRecord> } | { ok: false; answer: Answer } => {
    if (!mayAtAll(req.claims, permission)) return { ok: false, answer: forbidden(permission) };
    const entry = state.registrations.get(req.params.id ?? '');
    if (entry === undefined) return { ok: false, answer: notFound() };
    if (!hasPermission(req.claims as TokenClaims, permission, entry.value.entity)) return { ok: false, answer: forbidden(permission, entry.value.entity) };
    return { ok: true, entry };
  };

  defineEndpoint(ctx, 'registrations.get', (req) => {
    const found = editable(req, 'REGISTRATION_VIEW');
    return found.ok ? { ...ok(render(found.entry.value)), headers: CACHE_HEADERS } : found.answer;
  }, withId);

  const update = (req: EmuRequest, partial: boolean): Answer => {
    const found = editable(req, 'REGISTRATION_EDIT');
    if (!found.ok) return found.answer;
    const parsed = parseDetailBody(partial ? RegistrationPatchRequest : RegistrationCreateRequest, req.body);
    if (!parsed.ok) return parsed.answer;
    const current = found.entry.value;
    const base: RegistrationBody = partial ? { ...requestOf(current), ...parsed.value } : (parsed.value as RegistrationBody);
    if (base.entity !== current.entity && !hasPermission(req.claims as TokenClaims, 'REGISTRATION_EDIT', base.entity)) {
      return forbidden('REGISTRATION_EDIT', base.entity);
    }
    const built = build(base, current.id, current.created_at, isoNow(clock));
    if (!built.ok) return built.answer;
    found.entry.value = built.record;
    return ok(render(built.record));
  };
  defineEndpoint(ctx, 'registrations.update', (req) => update(req, false), withId);
  defineEndpoint(ctx, 'registrations.patch', (req) => update(req, true), withId);

  defineEndpoint(ctx, 'registrations.delete', (req) => {
    const found = editable(req, 'REGISTRATION_EDIT');
    if (!found.ok) return found.answer;
    state.registrations.softDelete(found.entry.id);
    return noContent();
  }, withId);

  function build(
    body: RegistrationBody,
    id: string,
    createdAt: string,
    now: string,
  ): { ok: true; record: RegistrationRecord } | { ok: false; answer: Answer } {
    const iso = body.taxable_jurisdiction.trim().toUpperCase();
    const type = body.registration_type ?? REGISTRATION_DEFAULTS.registration_type;
    const configured = settings.registrationCombinations[iso];
    if (configured === undefined || !configured.includes(type)) {
      const known = configured === undefined ? 'no registration type is configured there' : `configured: ${configured.join(', ')}`;
      return {
        ok: false,
        answer: detailAnswer(400, `taxable_jurisdiction ${iso} with registration_type ${type} is not a configured combination (${known})`),
      };
    }
    const opened = body.date_of_registration ?? null;
    const closed = body.date_registration_closed ?? null;
    if (opened !== null && closed !== null && closed < opened) {
      return { ok: false, answer: detailAnswer(400, `date_registration_closed ${closed} is before date_of_registration ${opened}`) };
    }
    return {
      ok: true,
      record: {
        id,
        entity: body.entity,
        taxable_jurisdiction: iso,
        entity_jurisdiction: entityJurisdiction(state, body.entity, iso).id,
        number: body.number ?? '',
        number_local: body.number_local ?? '',
        fiscal_code: body.fiscal_code ?? '',
        date_of_registration: opened,
        date_registration_closed: closed,
        date_of_filing_start: body.date_of_filing_start ?? null,
        fiscal_representative_type: body.fiscal_representative_type ?? REGISTRATION_DEFAULTS.fiscal_representative_type,
        registration_type: type,
        direct_debit_setup: body.direct_debit_setup ?? REGISTRATION_DEFAULTS.direct_debit_setup,
        entity_responsible_for_payment: body.entity_responsible_for_payment ?? REGISTRATION_DEFAULTS.entity_responsible_for_payment,
        iban: body.iban ?? '',
        created_at: createdAt,
        updated_at: now,
      },
    };
  }

  function listRegistrations(req: EmuRequest): Answer {
    const parsed = ListQuery.safeParse(single(req.query));
    if (!parsed.success) {
      const fields = issuesToFields(parsed.error.issues);
      return detailAnswer(400, `invalid query: ${summariseFields(fields)}`, fields);
    }
    const q = parsed.data;
    const claims = req.claims as TokenClaims;
    const visible = hasPermission(claims, 'REGISTRATION_VIEW') ? undefined : scopedEntities(claims, 'REGISTRATION_VIEW');
    const jurisdiction = q.taxable_jurisdiction;
    let rows = state.registrations.live().filter((e) => {
      const r = e.value;
      if (visible !== undefined && !visible.has(r.entity)) return false;
      if (q.entity !== undefined && r.entity !== q.entity) return false;
      if (q.entity_jurisdiction !== undefined && r.entity_jurisdiction !== q.entity_jurisdiction) return false;
      if (jurisdiction !== undefined && jurisdictionId(r.taxable_jurisdiction) !== jurisdiction && r.taxable_jurisdiction !== jurisdiction.toUpperCase()) {
        return false;
      }
      if (q.number !== undefined) {
        const needle = q.number.toLowerCase();
        if (!r.number.toLowerCase().includes(needle) && !r.number_local.toLowerCase().includes(needle)) return false;
      }
      return true;
    });
    if (q.order_by !== undefined) rows = sortRegistrations(rows, q.order_by, entityName);

    const pageSize = q.page_size === undefined ? settings.registrationPageSize : Number(q.page_size);
    const page = q.page === undefined ? 1 : Number(q.page);
    const pages = Math.max(1, Math.ceil(rows.length / pageSize));
    if (page > pages) return detailAnswer(404, 'Invalid page.');
    const link = (target: number) => {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(q)) if (key !== 'page' && value !== undefined) params.set(key, value);
      params.set('page', String(target));
      return `${req.origin}/registrations/v1/registrations/?${params.toString()}`;
    };
    const body = {
      count: rows.length,
      next: page < pages ? link(page + 1) : null,
      previous: page > 1 ? link(page - 1) : null,
      results: rows.slice((page - 1) * pageSize, page * pageSize).map((e) => render(e.value)),
    };
    return { status: 200, headers: CACHE_HEADERS, body: varyRegistrationPage(body, variety.dice('list:registrations')) };
  }
}

export function entityJurisdiction(state: EmulatorState, entity: string, iso: string): EntityJurisdiction {
  for (const ej of state.entityJurisdictions.values()) if (ej.entity === entity && ej.taxable_jurisdiction === iso) return ej;
  const created: EntityJurisdiction = { id: randomUUID(), entity, taxable_jurisdiction: iso };
  state.entityJurisdictions.set(created.id, created);
  return created;
}

export function renderRegistration(r: RegistrationRecord, day: string, entityName: string) {
  const status = registrationStatus(r, day);
  return {
    id: r.id,
    entity_jurisdiction: r.entity_jurisdiction,
    taxable_jurisdiction_detail: { id: jurisdictionId(r.taxable_jurisdiction), name: JURISDICTIONS[r.taxable_jurisdiction]?.name ?? r.taxable_jurisdiction, iso: r.taxable_jurisdiction },
    entity_detail: { id: r.entity, name: entityName },
    number: r.number,
    number_local: r.number_local,
    fiscal_code: r.fiscal_code,
    date_of_registration: r.date_of_registration,
    date_registration_closed: r.date_registration_closed,
    date_of_filing_start: r.date_of_filing_start,
    fiscal_representative_type: r.fiscal_representative_type,
    fiscal_representative_type_display: displayOf(r.fiscal_representative_type),
    registration_type: r.registration_type,
    registration_type_display: displayOf(r.registration_type),
    status,
    status_display: displayOf(status),
    direct_debit_setup: r.direct_debit_setup,
    entity_responsible_for_payment: r.entity_responsible_for_payment,
    entity_responsible_for_payment_display: displayOf(r.entity_responsible_for_payment),
    iban: r.iban,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/**
 * Ascending puts null dates last, descending first (as PostgreSQL does); an empty text field is the
 * smallest text, as the service stores "" for it. Ties keep creation order.
 */
function sortRegistrations(rows: Entry<RegistrationRecord>[], orderBy: string, entityName: (r: RegistrationRecord) => string) {
  const descending = orderBy.startsWith('-');
  const field = orderBy.replace(/^-/, '');
  const valueOf = (r: RegistrationRecord): string | null => {
    if (field === 'entity_name') return entityName(r);
    const v = r[field as keyof RegistrationRecord];
    return typeof v === 'string' ? v : null;
  };
  return [...rows].sort((a, b) => {
    const x = valueOf(a.value);
    const y = valueOf(b.value);
    if (x === y) return a.seq - b.seq;
    if (x === null) return descending ? -1 : 1;
    if (y === null) return descending ? 1 : -1;
    const cmp = x < y ? -1 : 1;
    return descending ? -cmp : cmp;
  });
}

function requestOf(r: RegistrationRecord): RegistrationBody {
  const optional = <T>(v: T | null): T | undefined => (v === null ? undefined : v);
  return {
    taxable_jurisdiction: r.taxable_jurisdiction,
    entity: r.entity,
    number: r.number,
    number_local: r.number_local,
    fiscal_code: r.fiscal_code,
    date_of_registration: optional(r.date_of_registration),
    date_registration_closed: r.date_registration_closed,
    date_of_filing_start: optional(r.date_of_filing_start),
    fiscal_representative_type: r.fiscal_representative_type,
    registration_type: r.registration_type,
    direct_debit_setup: r.direct_debit_setup,
    entity_responsible_for_payment: r.entity_responsible_for_payment,
    iban: r.iban,
  };
}


/** Query values given once; a repeated parameter keeps its last value. */
function single(query: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (typeof value === 'string') out[key] = value;
    else if (Array.isArray(value) && typeof value[value.length - 1] === 'string') out[key] = value[value.length - 1] as string;
  }
  return out;
}
