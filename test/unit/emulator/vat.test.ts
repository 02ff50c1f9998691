import { describe, expect, it } from 'vitest';
import { computeBoxes, dueDate } from '../../../src/emulator/vat/filings.js';
import { registrationStatus } from '../../../src/emulator/vat/registrations.js';
import type { VatTransactionRecord } from '../../../src/emulator/state.js';
import { ENTITY, pluck, useEmulator, vatBody } from './helpers.js';

describe('registration status from dates', () => {
  const day = '2025-03-15';
  it('follows the table of the spec', () => {
    expect(registrationStatus({ date_of_registration: null, date_registration_closed: null }, day)).toBe('pending');
    expect(registrationStatus({ date_of_registration: '2025-03-16', date_registration_closed: null }, day)).toBe('pending');
    expect(registrationStatus({ date_of_registration: '2025-03-15', date_registration_closed: null }, day)).toBe('active');
    expect(registrationStatus({ date_of_registration: '2024-01-01', date_registration_closed: '2025-03-16' }, day)).toBe('active');
    expect(registrationStatus({ date_of_registration: '2024-01-01', date_registration_closed: '2025-03-15' }, day)).toBe('inactive');
  });
});

describe('filing computations', () => {
  const tx = (type: string, net: string, vat: string): VatTransactionRecord =>
    ({ ...vatBody('ej', { transaction_type_id: type, net, vat }), id: 'x', validity_status: 'valid', compliance_status: 'valid', committed: true, created_at: '' }) as VatTransactionRecord;

  it('sums output VAT, reverse-charged imported services and net amounts into the boxes', () => {
    const result = computeBoxes(
      [
        tx('b2b5a1e5-0000-4000-8000-000000000001', '100.00', '19.00'),
        tx('b2c5a1e5-0000-4000-8000-000000000002', '10.10', '1.92'),
        tx('e0e5a1e5-0000-4000-8000-000000000003', '500.00', '0.00'),
        tx('1a905e1c-0000-4000-8000-000000000004', '200.00', '38.00'),
      ],
      'EUR',
    );
    expect(Object.fromEntries(result.boxes.map((b) => [b.box_number, b.value]))).toEqual({
      '1': '20.92',
      '2': '38.00',
      '3': '58.92',
      '4': '38.00',
      '5': '20.92',
      '6': '610.10',
      '7': '200.00',
      '8': '500.00',
      '9': '4',
    });
    expect(result).toMatchObject({ total_vat_due: '20.92', total_net: '610.10' });
  });

  it('is due one month and seven days after the period ends', () => {
    expect(dueDate('2025-03-31')).toBe('2025-05-07');
    expect(dueDate('2025-01-31')).toBe('2025-03-07');
    expect(dueDate('2024-12-31')).toBe('2025-02-07');
  });
});

describe('registrations over HTTP', () => {
  const ctx = useEmulator({ clock: () => Date.parse('2025-03-15T12:00:00Z'), entities: [{ id: ENTITY, name: 'Beta GmbH' }] });
  const OTHER = '22222222-3333-4444-8555-666666666666';
  const create = (body: Record<string, unknown>) => ctx.http('POST', '/registrations/v1/registrations/', { json: body });

  it('filters by number (and number_local), entity, taxable jurisdiction and entity jurisdiction, and orders', async () => {
    const de = await create({ taxable_jurisdiction: 'DE', entity: ENTITY, number: 'DE111', date_of_registration: '2024-05-01' });
    await create({ taxable_jurisdiction: 'FR', entity: ENTITY, number_local: 'FR-de111-x', date_of_registration: '2023-01-01' });
    await create({ taxable_jurisdiction: 'de', entity: OTHER, number: 'DE222' });
    expect(de.status).toBe(201);
    expect(de.body.entity_detail).toEqual({ id: ENTITY, name: 'Beta GmbH' });

    const list = async (query: string) =>
      ((await ctx.http('GET', `/registrations/v1/registrations/?${query}`)).body.results as { number: string; number_local: string }[]).map(
        (r) => r.number || r.number_local,
      );
    expect(await list('number=de111')).toEqual(['DE111', 'FR-de111-x']);
    expect(await list(`entity=${OTHER}`)).toEqual(['DE222']);
    expect(await list(`taxable_jurisdiction=${de.body.taxable_jurisdiction_detail.id}`)).toEqual(['DE111', 'DE222']);
    expect(await list('taxable_jurisdiction=FR')).toEqual(['FR-de111-x']);
    expect(await list(`entity_jurisdiction=${de.body.entity_jurisdiction}`)).toEqual(['DE111']);
    expect(await list('order_by=date_of_registration')).toEqual(['FR-de111-x', 'DE111', 'DE222']);
    expect(await list('order_by=-date_of_registration')).toEqual(['DE222', 'DE111', 'FR-de111-x']);
    expect(await list('order_by=entity_name')).toEqual(['DE111', 'FR-de111-x', 'DE222']);
    const bad = await ctx.http('GET', '/registrations/v1/registrations/?order_by=status');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/order_by: must be one of entity_name/);
  });

  it('pages with page and page_size, absolute next/previous links that keep the filters, and 404 past the end', async () => {
    for (const iso of ['DE', 'FR', 'IT', 'ES', 'NL']) await create({ taxable_jurisdiction: iso, entity: ENTITY });
    const first = await ctx.http('GET', `/registrations/v1/registrations/?entity=${ENTITY}&page_size=2`);
    expect(first.body.count).toBe(5);
    expect(first.body.previous).toBeNull();
    expect(first.body.next).toBe(`${ctx.emulator.url}/registrations/v1/registrations/?entity=${ENTITY}&page_size=2&page=2`);
    expect(first.headers.get('cache-control')).toBe('private, max-age=300');
    expect(first.headers.get('vary')).toBe('Authorization');
    const third = new URL(String(first.body.next).replace('page=2', 'page=3'));
    const last = await ctx.http('GET', `${third.pathname}${third.search}`);
    expect(last.body.results).toHaveLength(1);
    expect(last.body.next).toBeNull();
    expect(last.body.previous).toMatch(/page=2$/);
    expect((await ctx.http('GET', '/registrations/v1/registrations/?page=4&page_size=2')).status).toBe(404);
    expect((await ctx.http('GET', '/registrations/v1/registrations/?page_size=101')).status).toBe(400);
  });

  it('checks permissions per entity when a token carries scoped ones', async () => {
    await create({ taxable_jurisdiction: 'DE', entity: ENTITY });
    const other = await create({ taxable_jurisdiction: 'DE', entity: OTHER });
    ctx.emulator.authority.addClient({ clientId: 'scoped', clientSecret: 's', permissions: [`REGISTRATION_VIEW:${ENTITY}`, `REGISTRATION_CREATE:${ENTITY}`] });
    const token = (await ctx.http('POST', '/v1/auth/token', { json: { client_id: 'scoped', client_secret: 's' }, token: null })).body.access_token;
    const list = await ctx.http('GET', '/registrations/v1/registrations/', { token });
    expect(pluck(pluck(list.body.results, 'entity_detail'), 'id')).toEqual([ENTITY]);
    expect((await ctx.http('GET', `/registrations/v1/registrations/${other.body.id}/`, { token })).status).toBe(403);
    expect((await ctx.http('POST', '/registrations/v1/registrations/', { token, json: { taxable_jurisdiction: 'FR', entity: ENTITY } })).status).toBe(201);
    const denied = await ctx.http('POST', '/registrations/v1/registrations/', { token, json: { taxable_jurisdiction: 'FR', entity: OTHER } });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatch(`REGISTRATION_CREATE for entity ${OTHER}`);
    expect((await ctx.http('DELETE', `/registrations/v1/registrations/${other.body.id}/`, { token })).status).toBe(403);
  });

  it('answers {detail} errors: 400 for bad bodies and unconfigured combinations, 404 for unknown ids', async () => {
    const bad = await create({ taxable_jurisdiction: 'DE', entity: 'nope', number: 'X'.repeat(21) });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/entity: .*number: /);
    expect(bad.body.details).toHaveProperty('number');
    const combo = await create({ taxable_jurisdiction: 'JP', entity: ENTITY });
    expect(combo.body.detail).toMatch(/JP with registration_type standard is not a configured combination \(no registration type is configured there\)/);
    const missing = await ctx.http('PATCH', '/registrations/v1/registrations/00000000-0000-4000-8000-000000000000/', { json: {} });
    expect(missing).toMatchObject({ status: 404, body: { detail: 'Not found.' } });
    const closedBefore = await create({ taxable_jurisdiction: 'DE', entity: ENTITY, date_of_registration: '2025-01-01', date_registration_closed: '2024-01-01' });
    expect(closedBefore.status).toBe(400);
  });

  it('recomputes the status on every read as the clock moves', async () => {
    const reg = await create({ taxable_jurisdiction: 'DE', entity: ENTITY, date_of_registration: '2025-04-01', date_registration_closed: '2025-06-30' });
    expect(reg.body.status).toBe('pending');
    ctx.emulator.clock.set(Date.parse('2025-04-01T00:00:00Z'));
    expect((await ctx.http('GET', `/registrations/v1/registrations/${reg.body.id}/`, { token: await freshToken() })).body.status).toBe('active');
    ctx.emulator.clock.set(Date.parse('2025-06-30T00:00:00Z'));
    expect((await ctx.http('GET', `/registrations/v1/registrations/${reg.body.id}/`, { token: await freshToken() })).body.status).toBe('inactive');
  });

  async function freshToken(): Promise<string> {
    return String((await ctx.http('POST', '/v1/auth/token', { json: { client_id: 'taxsync-dev', client_secret: 'taxsync-dev-secret' }, token: null })).body.access_token);
  }
});

describe('filings over HTTP', () => {
  // Exact statuses, totals and file lists: the canonical answers (the variety is tested in variety.test.ts).
  const ctx = useEmulator({ control: true, variety: 'strict' });

  it('refuses unknown filing types, inverted periods and bad approve bodies with {detail}', async () => {
    const unknown = await ctx.http('POST', '/api/filing/v1/filings/', {
      json: { registration_filing_type: '00000000-0000-4000-8000-000000000000', reporting_period_start: '2025-01-01', reporting_period_end: '2025-01-31' },
    });
    expect(unknown).toMatchObject({ status: 400, body: { detail: expect.stringMatching(/neither a registration nor an entity jurisdiction/) } });
    const reg = await ctx.http('POST', '/registrations/v1/registrations/', { json: { taxable_jurisdiction: 'SE', entity: ENTITY } });
    const inverted = await ctx.http('POST', '/api/filing/v1/filings/', {
      json: { registration_filing_type: reg.body.entity_jurisdiction, reporting_period_start: '2025-02-01', reporting_period_end: '2025-01-31' },
    });
    expect(inverted.status).toBe(400);
    const filing = await ctx.http('POST', '/api/filing/v1/filings/', {
      json: { registration_filing_type: reg.body.entity_jurisdiction, reporting_period_start: '2025-01-01', reporting_period_end: '2025-01-31' },
    });
    expect(filing.body).toMatchObject({ status: 'draft', currency: 'SEK', total_vat_due: '0.00' });
    const badApprove = await ctx.http('POST', `/api/filing/v1/filings/${filing.body.id}/approve/`, { json: { approvedBy: 'x' } });
    expect(badApprove.status).toBe(400);
    expect(badApprove.body.detail).toMatch(/camelCase field approvedBy/);
  });

  it('approves from pending_approval, and not after submission (409); forced statuses add files', async () => {
    const reg = await ctx.http('POST', '/registrations/v1/registrations/', { json: { taxable_jurisdiction: 'DE', entity: ENTITY } });
    const create = () =>
      ctx.http('POST', '/api/filing/v1/filings/', {
        json: { registration_filing_type: reg.body.id, reporting_period_start: '2025-01-01', reporting_period_end: '2025-01-31' },
      });
    const pending = (await create()).body.id;
    await ctx.http('POST', `/__emulator/filings/${pending}/status`, { json: { status: 'pending_approval' }, token: null });
    expect((await ctx.http('POST', `/api/filing/v1/filings/${pending}/approve/`, { json: {} })).body.status).toBe('approved');
    const submitted = (await create()).body.id;
    await ctx.http('POST', `/__emulator/filings/${submitted}/status`, { json: { status: 'submitted' }, token: null });
    const refused = await ctx.http('POST', `/api/filing/v1/filings/${submitted}/approve/`);
    expect(refused).toMatchObject({ status: 409, body: { detail: 'filing is submitted: only a draft or pending_approval filing can be approved' } });
    const filing = await ctx.http('GET', `/api/filing/v1/filings/${submitted}/`);
    expect(filing.body.filing_reference).toMatch(/^EMU-/);
    expect(filing.body.submitted_date).not.toBeNull();
    const files = await ctx.http('GET', `/api/filing/v1/filings/${submitted}/files/`);
    expect(pluck(files.body.results, 'file_type')).toEqual(['vat_return', 'submission_receipt']);
  });
});
