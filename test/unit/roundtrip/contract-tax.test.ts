import { describe, expect, it } from 'vitest';
import { hasCode } from '../../../src/domain/errors.js';
import { NYC, amount, keysOf, rejectionOf, useEmulatorClients } from '../../helpers/emulator-clients.js';

// The client's reading against the emulator's, with the emulator's variety on: assertions are on
// meaning (values of amounts, what a status stands for), not on how a varied answer writes them.

// The real clients of src/api against the emulator, endpoint by endpoint of tax-calculation-api.md.

describe('tax engine contract: tokens', () => {
  const ctx = useEmulatorClients();

  it('variant B issues a JWT with expires_in and expire_at, and verify returns its claims', async () => {
    const claims = await ctx.clients.tax.verify();
    expect(claims.sub).toBe('taxsync-dev');
    expect(claims.iss).toBe('taxsync-emulator');
    expect(claims.exp! - claims.iat!).toBe(86_400);
    expect(claims.permissions).toEqual(['REGISTRATION_VIEW', 'REGISTRATION_CREATE', 'REGISTRATION_EDIT']);

    const raw = await ctx.http('POST', '/v1/auth/token', { json: { client_id: 'taxsync-dev', client_secret: 'taxsync-dev-secret' }, token: null });
    expect(raw.status).toBe(200);
    expect(raw.body).toMatchObject({ token_type: 'Bearer', expires_in: 86_400 });
    expect(String(raw.body.access_token).split('.')).toHaveLength(3);
    expect(Date.parse(String(raw.body.expire_at)) - Date.now()).toBeGreaterThan(86_000_000);
  });

  it('refuses wrong credentials with 401, which the client reports as API_AUTH_FAILED', async () => {
    const raw = await ctx.http('POST', '/v1/auth/token', { json: { client_id: 'taxsync-dev', client_secret: 'wrong' }, token: null });
    expect(raw.status).toBe(401);
    expect(raw.body.error).toMatch(/invalid client credentials/);
  });
});

describe('tax engine contract: variant A token endpoint', () => {
  const ctx = useEmulatorClients({ variantA: true, tokenTtlSeconds: 120 });

  it('serves the form-encoded /oauth/token and the token works on every API', async () => {
    const claims = await ctx.clients.tax.verify();
    expect(claims.exp! - claims.iat!).toBe(120);
    expect(ctx.emulator.requestLog.entries().map((e) => e.endpoint)).toEqual(['auth.oauthToken', 'auth.verify']);

    const form = await ctx.http('POST', '/oauth/token', {
      token: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=taxsync-dev&client_secret=taxsync-dev-secret',
    });
    expect(form.status).toBe(200);
    expect(keysOf(form.body)).toEqual(expect.arrayContaining(['access_token', 'expires_in', 'token_type']));
    expect(form.body).not.toHaveProperty('expire_at');
    const wrongGrant = await ctx.http('POST', '/oauth/token', {
      token: null,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=password&client_id=taxsync-dev&client_secret=taxsync-dev-secret',
    });
    expect(wrongGrant).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
  });
});

describe('tax engine contract: customers', () => {
  const ctx = useEmulatorClients();

  it('upserts by (source, external_id): a repeat updates the same record, another source makes a new one', async () => {
    const { customers } = ctx.clients.tax;
    const first = await customers.upsert({ source: 'api', external_id: 'c-1', name: 'Ada', customer_type: 'retail' });
    const again = await customers.upsert({ source: 'api', external_id: 'c-1', name: 'Ada Lovelace', email: 'ada@example.com' });
    const other = await customers.upsert({ source: 'shopify', external_id: 'c-1', name: 'Ada' });
    expect(again.id).toBe(first.id);
    expect(again.name).toBe('Ada Lovelace');
    expect(again.created_at).toBe(first.created_at);
    expect(other.id).not.toBe(first.id);
    expect(ctx.emulator.requestLog.entries().filter((e) => e.endpoint === 'customers.upsert').map((e) => e.status)).toEqual([201, 200, 201]);
  });

  it('reads by id and by key, lists, and soft-deletes by id and by key', async () => {
    const { customers } = ctx.clients.tax;
    const a = await customers.upsert({ source: 'api', external_id: 'c-a', addresses: { shipping: NYC } });
    const b = await customers.upsert({ source: 'stripe', external_id: 'cus/with/slashes' });
    expect((await customers.get(a.id)).addresses?.shipping?.city).toBe('New York');
    expect((await customers.getByKey('stripe', 'cus/with/slashes')).id).toBe(b.id);
    const page = await customers.list();
    expect(page.data.map((c) => c.id)).toEqual([a.id, b.id]);
    expect(page.cursors).toMatchObject({ has_next: false, has_previous: false, limit: 20 });

    await customers.delete(a.id);
    await customers.deleteByKey('stripe', 'cus/with/slashes');
    expect(hasCode(await rejectionOf(customers.get(a.id)), 'API_NOT_FOUND')).toBe(true);
    expect(hasCode(await rejectionOf(customers.getByKey('stripe', 'cus/with/slashes')), 'API_NOT_FOUND')).toBe(true);
    expect((await customers.list()).data).toEqual([]);
    expect(hasCode(await rejectionOf(customers.delete(a.id)), 'API_NOT_FOUND')).toBe(true);
  });

  it('an upsert after a soft delete creates a fresh record with a new id', async () => {
    const { customers } = ctx.clients.tax;
    const old = await customers.upsert({ source: 'api', external_id: 'c-2' });
    await customers.delete(old.id);
    const fresh = await customers.upsert({ source: 'api', external_id: 'c-2' });
    expect(fresh.id).not.toBe(old.id);
    expect(hasCode(await rejectionOf(customers.get(old.id)), 'API_NOT_FOUND')).toBe(true);
  });

  it('pages forward and back with cursors the client follows', async () => {
    const { customers } = ctx.clients.tax;
    for (let i = 0; i < 45; i += 1) await customers.upsert({ source: 'api', external_id: `c-${String(i).padStart(2, '0')}` });
    const pages = [];
    for await (const page of customers.pages({ limit: 20 })) pages.push(page);
    expect(pages.map((p) => p.data.length)).toEqual([20, 20, 5]);
    const ids = [];
    for await (const c of customers.iterate({ limit: 7 })) ids.push(c.external_id);
    expect(ids).toHaveLength(45);
    expect(new Set(ids).size).toBe(45);
    const last = pages[2]!;
    const back = await customers.list({ before: last.cursors!.before!, limit: 20 });
    expect(back.data.map((c) => c.external_id)).toEqual(pages[1]!.data.map((c) => c.external_id));
    expect(back.cursors).toMatchObject({ has_previous: true, has_next: true });
  });
});

describe('tax engine contract: exemptions', () => {
  const ctx = useEmulatorClients();

  it('creates, reads, updates, lists and soft-deletes', async () => {
    const { exemptions, customers } = ctx.clients.tax;
    const customer = await customers.upsert({ source: 'api', external_id: 'c-ex' });
    const created = await exemptions.create({
      customer_id: customer.id,
      country: 'US',
      jurisdictions: ['NY'],
      start_date: '2025-01-01',
      end_date: null,
      exemption_type: 'full',
    });
    expect(created).toMatchObject({ customer_id: customer.id, exemption_status: 'active', jurisdictions: ['NY'], end_date: null });
    expect((await exemptions.get(created.id)).id).toBe(created.id);
    const updated = await exemptions.update(created.id, {
      customer_id: customer.id,
      country: 'US',
      start_date: '2025-01-01',
      end_date: '2025-12-31',
      exemption_type: 'partial',
      exemption_status: 'cancelled',
    });
    expect(updated).toMatchObject({ id: created.id, exemption_type: 'partial', exemption_status: 'cancelled', jurisdictions: [] });
    const list = await exemptions.list();
    expect(list.cursors).not.toBeNull();
    expect(list.data.map((e) => e.id)).toEqual([created.id]);
    await exemptions.delete(created.id);
    expect(hasCode(await rejectionOf(exemptions.get(created.id)), 'API_NOT_FOUND')).toBe(true);
    expect((await exemptions.list()).data).toEqual([]);
  });

  it('refuses an exemption for a customer that does not exist (422)', async () => {
    const error = await rejectionOf(
      ctx.clients.tax.exemptions.create({ customer_id: '00000000-0000-4000-8000-000000000000', country: 'US', start_date: '2025-01-01', exemption_type: 'full' }),
    );
    expect(hasCode(error, 'API_INVALID')).toBe(true);
    expect(error.status).toBe(422);
    expect(error.fields).toHaveProperty('customer_id');
  });
});

describe('tax engine contract: transactions', () => {
  const ctx = useEmulatorClients();

  it('upserts with tax computed, reads by id and key, lists and soft-deletes by id and key', async () => {
    const { transactions } = ctx.clients.tax;
    const invoice = await transactions.upsert({
      source: 'api',
      external_id: 'inv-1',
      transaction_date: '2025-03-01T10:00:00Z',
      currency_details: { currency: 'USD' },
      addresses: { shipping: NYC },
      customer_details: { customer: { source: 'api', external_id: 'c-inline', name: 'Inline Ltd' } },
      items: [{ name: 'Widget', unit_price: '100.00', quantity: '2' }],
      shipping_fee: { amount: '10.00' },
    });
    expect(invoice.tenant_id).toBeDefined();
    expect(invoice.transaction_type).toBe('invoice');
    expect(invoice.items?.[0]).toMatchObject({ taxable_category: 'taxable', taxability_reason: 'standard_rated' });
    expect(amount(invoice.items?.[0]?.total_price)).toBe('200');
    // NYC: 4% + 4.5% + 0.375% = 8.875% on 200.00 and on 10.00 shipping.
    expect(amount(invoice.items?.[0]?.tax?.total_tax)).toBe('17.75');
    expect(amount(invoice.tax?.total_tax)).toBe('18.64');
    // A varied answer may leave matched_address out, or name the street level `rooftop`.
    const matched = invoice.addresses?.shipping?.matched_address;
    if (matched !== undefined) expect(matched).toMatchObject({ match_level: expect.stringMatching(/^(street|rooftop)$/), low_confidence_warning: false });
    const inline = await ctx.clients.tax.customers.getByKey('api', 'c-inline');
    expect(invoice.customer_details?.customer_id).toBe(inline.id);

    const again = await transactions.upsert({ source: 'api', external_id: 'inv-1', items: [{ unit_price: '5.00' }] });
    expect(again.id).toBe(invoice.id);
    expect((await transactions.get(invoice.id)).items).toHaveLength(1);
    expect((await transactions.getByKey('api', 'inv-1')).id).toBe(invoice.id);

    const second = await transactions.upsert({ source: 'shopify', external_id: 'inv-1', items: [{ unit_price: '1' }] });
    expect((await transactions.list()).data.map((t) => t.id)).toEqual([invoice.id, second.id]);
    await transactions.delete(invoice.id);
    await transactions.deleteByKey('shopify', 'inv-1');
    expect((await transactions.list()).data).toEqual([]);
    expect(hasCode(await rejectionOf(transactions.getByKey('api', 'inv-1')), 'API_NOT_FOUND')).toBe(true);
  });

  it('links a refund to its original: tax = original tax × fraction', async () => {
    const { transactions } = ctx.clients.tax;
    const invoice = await transactions.upsert({
      source: 'api',
      external_id: 'inv-2',
      addresses: { shipping: NYC },
      items: [{ unit_price: '100.00' }],
    });
    expect(amount(invoice.tax?.total_tax)).toBe('8.88');
    const refund = await transactions.upsert({
      source: 'api',
      external_id: 'refund-inv-2-1',
      transaction_type: 'refund',
      created_from: invoice.id,
      refund_info: { is_refund_linked: true, refund_linked_percentage: '0.5' },
      items: [{ unit_price: '50.00' }],
    });
    expect(amount(refund.tax?.total_tax)).toBe('4.44');
    expect(amount(refund.items?.[0]?.tax?.total_tax)).toBe('4.44');
    expect(refund.created_from).toBe(invoice.id);
  });
});
