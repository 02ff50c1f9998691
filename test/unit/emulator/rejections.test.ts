import { describe, expect, it } from 'vitest';
import { ENTITY, keysOf, useEmulator, vatBody } from './helpers.js';

// Raw HTTP: the mistakes a client could make, some of which the real client refuses locally.

describe('the emulator rejects client mistakes with a clear message', () => {
  const ctx = useEmulator();

  it('camelCase fields, naming the snake_case field', async () => {
    const res = await ctx.http('PUT', '/v1/customers/', { json: { source: 'api', externalId: 'c-1', customerType: 'retail' } });
    expect(res.status).toBe(400);
    expect(res.body.details.externalId[0]).toMatch(/camelCase field externalId is not accepted.*external_id/);
    expect(res.body.details.customerType[0]).toMatch(/customer_type/);
  });

  it('source in the path of an upsert', async () => {
    for (const resource of ['customers', 'transactions']) {
      const res = await ctx.http('PUT', `/v1/${resource}/api/c-1`, { json: { name: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(new RegExp(`send PUT /v1/${resource}/ with source and external_id in the body`));
    }
  });

  it('a percentage instead of a fraction for refund_linked_percentage', async () => {
    const invoice = await ctx.http('PUT', '/v1/transactions/', { json: { source: 'api', external_id: 'inv-1', items: [{ unit_price: '10' }] } });
    for (const value of ['50', '0', '-0.5']) {
      const res = await ctx.http('PUT', '/v1/transactions/', {
        json: {
          source: 'api',
          external_id: 'refund-1',
          transaction_type: 'refund',
          created_from: invoice.body.id,
          refund_info: { is_refund_linked: true, refund_linked_percentage: value },
          items: [{ unit_price: '5' }],
        },
      });
      expect(res.status).toBe(400);
      expect(res.body.details['refund_info.refund_linked_percentage'][0]).toMatch(/must be a decimal fraction in \(0, 1\]/);
    }
    const fifty = await ctx.http('PUT', '/v1/transactions/', {
      json: { source: 'api', external_id: 'refund-1', transaction_type: 'refund', created_from: invoice.body.id, refund_info: { is_refund_linked: true, refund_linked_percentage: '50' } },
    });
    expect(fifty.body.details['refund_info.refund_linked_percentage'][0]).toMatch(/50 looks like a percentage — send 0\.5/);
  });

  it('a percentage instead of a fraction for a manual tax rate', async () => {
    const res = await ctx.http('PUT', '/v1/transactions/', { json: { source: 'api', external_id: 'inv-m', items: [{ unit_price: '10', manual_sales_tax_rate: '8.25' }] } });
    expect(res.status).toBe(400);
    expect(res.body.details['items[0].manual_sales_tax_rate'][0]).toMatch(/looks like a percentage — send 0\.0825/);
  });

  it('lineAmount on an item', async () => {
    const res = await ctx.http('PUT', '/v1/transactions/', { json: { source: 'api', external_id: 'inv-2', items: [{ unit_price: '10', lineAmount: '10' }] } });
    expect(res.status).toBe(400);
    expect(res.body.details['items[0].lineAmount'][0]).toMatch(/lineAmount was removed.*unit_price times quantity/);
  });

  it('a missing unit_price, an unknown enum value, an unknown source and a numeric source', async () => {
    const res = await ctx.http('PUT', '/v1/transactions/', {
      json: { source: 'api', external_id: 'inv-3', transaction_status: 'open', items: [{ quantity: '1' }] },
    });
    expect(res.status).toBe(400);
    expect(keysOf(res.body.details).sort()).toEqual(['items[0].unit_price', 'transaction_status']);
    const unknown = await ctx.http('PUT', '/v1/customers/', { json: { source: 'magento', external_id: 'c' } });
    expect(unknown.body.details.source[0]).toMatch(/unknown source "magento"; expected one of api, shopify/);
    const numeric = await ctx.http('PUT', '/v1/customers/', { json: { source: 3, external_id: 'c' } });
    expect(numeric.body.details.source[0]).toMatch(/numeric source codes were replaced/);
  });

  it('limit 101, and a cursor it did not issue', async () => {
    const res = await ctx.http('GET', '/v1/transactions/?limit=101');
    expect(res.status).toBe(400);
    expect(res.body.details.limit[0]).toMatch(/from 1 to 100/);
    expect((await ctx.http('GET', '/v1/customers/?limit=100')).status).toBe(200);
    const cursor = await ctx.http('GET', '/v1/customers/?after=42');
    expect(cursor.body.details.after[0]).toMatch(/cursor from a previous page/);
  });

  it('a missing, malformed, foreign or expired bearer token: 401 on every route', async () => {
    const missing = await ctx.http('GET', '/v1/customers/', { token: null });
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatch(/missing bearer token/);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    const registration = await ctx.http('GET', '/registrations/v1/registrations/', { token: null });
    expect(registration.status).toBe(401);
    expect(registration.body.detail).toMatch(/missing bearer token/);
    const garbage = await ctx.http('POST', '/v1/auth/verify', { token: 'not-a-jwt' });
    expect(garbage.status).toBe(401);
    const token = await ctx.token();
    const [header, payload] = token.split('.');
    const forged = await ctx.http('POST', '/v1/auth/verify', { token: `${header}.${payload}.AAAA` });
    expect(forged.body.error).toMatch(/signature is invalid/);
    ctx.emulator.clock.advance(86_400_000);
    const expired = await ctx.http('POST', '/v1/auth/verify', { token });
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatch(/token expired/);
  });

  it('an exemption ending before it starts, and a transaction naming records that do not exist (422)', async () => {
    const customer = await ctx.http('PUT', '/v1/customers/', { json: { source: 'api', external_id: 'c-x' } });
    const ex = await ctx.http('POST', '/v1/exemptions/', {
      json: { customer_id: customer.body.id, country: 'US', start_date: '2025-06-01', end_date: '2025-01-01', exemption_type: 'full' },
    });
    expect(ex.status).toBe(400);
    expect(ex.body.details.end_date[0]).toMatch(/before start_date/);
    const tx = await ctx.http('PUT', '/v1/transactions/', {
      json: {
        source: 'api',
        external_id: 'refund-x',
        transaction_type: 'refund',
        created_from: '00000000-0000-4000-8000-000000000000',
        refund_info: { is_refund_linked: true, refund_linked_percentage: '1' },
        customer_details: { customer_external_id: 'nobody', customer_source: 'api' },
      },
    });
    expect(tx.status).toBe(422);
    expect(tx.body.details.created_from[0]).toMatch(/needs its original to exist first/);
    expect(tx.body.details['customer_details.customer_external_id'][0]).toMatch(/no customer/);
  });

  it('refunds of one invoice that add up past the whole', async () => {
    const invoice = await ctx.http('PUT', '/v1/transactions/', { json: { source: 'api', external_id: 'inv-9', items: [{ unit_price: '10' }] } });
    const refund = (id: string, fraction: string) =>
      ctx.http('PUT', '/v1/transactions/', {
        json: { source: 'api', external_id: id, transaction_type: 'refund', created_from: invoice.body.id, refund_info: { is_refund_linked: true, refund_linked_percentage: fraction } },
      });
    expect((await refund('refund-9a', '0.6')).status).toBe(201);
    expect((await refund('refund-9a', '0.7')).status).toBe(200);
    const over = await refund('refund-9b', '0.4');
    expect(over.status).toBe(422);
    expect(over.body.error).toBe('the transaction does not agree with the records it refers to');
    expect(over.body.details['refund_info.refund_linked_percentage'][0]).toMatch(/would add up to 1\.1/);
  });
});

describe('VAT submission: each of the ten rules gives a 422 field error', () => {
  const ctx = useEmulator({ clock: () => Date.parse('2025-03-15T12:00:00Z') });

  async function ej(): Promise<string> {
    const reg = await ctx.http('POST', '/registrations/v1/registrations/', { json: { taxable_jurisdiction: 'DE', entity: ENTITY } });
    return reg.body.entity_jurisdiction as string;
  }
  const submit = (body: unknown) => ctx.http('POST', '/api/vat/v1/transactions/', { json: body });

  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ['1. net + vat = gross', { gross: '118.00' }, 'gross', /net \+ vat must equal gross: 100\.00 \+ 19\.00 = 119\.00, not 118\.00/],
    ['2. vat = net × rate within tolerance', { vat: '17.00', gross: '117.00' }, 'vat', /net × vat_rate \/ 100 = 19\.00 within 0\.05/],
    ['3. invoice_date not in the future', { invoice_date: '2025-03-16' }, 'invoice_date', /in the future \(today is 2025-03-15\)/],
    ['4. vat_number format of the partner country', { vat_number: 'DE12345' }, 'vat_number', /does not match the DE VAT number format/],
    ['5. ISO 4217 currency', { currency: 'EUX' }, 'currency', /not an ISO 4217 currency code/],
    ['6. ISO 3166-1 alpha-2 country', { partner_country: 'XX', vat_number: undefined }, 'partner_country', /not an ISO 3166-1 alpha-2 country code/],
    ['8. at most 2 decimal places', { net: '100.001' }, 'net', /at most 2 decimal places/],
    ['9. net positive', { net: '0.00', vat: '0.00', gross: '0.00' }, 'net', /net must be positive/],
    ['10. known transaction type', { transaction_type_id: '00000000-0000-4000-8000-000000000000' }, 'transaction_type_id', /not a known transaction type/],
  ];
  for (const [rule, override, field, message] of cases) {
    it(`rule ${rule}`, async () => {
      const res = await submit(vatBody(await ej(), override));
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('validation failed');
      expect(keysOf(res.body.details)).toEqual([field]);
      expect(res.body.details[field][0]).toMatch(message);
    });
  }

  it('rule 7. invoice_number unique per entity jurisdiction: the only field error, so the client sees VAT_DUPLICATE', async () => {
    const id = await ej();
    expect((await submit(vatBody(id))).status).toBe(201);
    const again = await submit(vatBody(id, { invoice_number: '  INV-1001  ' }));
    expect(again.status).toBe(422);
    expect(again.body.details).toEqual({ invoice_number: [`invoice_number INV-1001 already exists for entity jurisdiction ${id}`] });
  });

  it('missing fields, unknown or camelCase fields, and a non-object body', async () => {
    const id = await ej();
    const { invoice_number: _n, ...rest } = vatBody(id);
    const res = await submit({ ...rest, invoiceNumber: 'X' });
    expect(res.status).toBe(422);
    expect(res.body.details.invoice_number).toEqual(['This field is required.']);
    expect(res.body.details.invoiceNumber[0]).toMatch(/camelCase/);
    const array = await submit([1, 2]);
    expect(array.status).toBe(400);
    expect(array.body).toMatchObject({ error: expect.stringMatching(/invalid request data/), details: {} });
    const broken = await ctx.http('POST', '/api/vat/v1/transactions/', { headers: { 'content-type': 'application/json' }, body: '{"net": ' });
    expect(broken.status).toBe(400);
    expect(broken.body.error).toMatch(/not valid JSON/);
  });

  it('warnings answer 200: vat within the tolerance, and no vat_number on a B2B sale', async () => {
    const id = await ej();
    const near = await submit(vatBody(id, { vat: '19.03', gross: '119.03' }));
    expect(near.status).toBe(200);
    // A varied answer may say pending_review for a compliance check that found nothing; never warning or error.
    expect(near.body).toMatchObject({ validity_status: 'warning', compliance_status: expect.stringMatching(/^(valid|pending_review)$/) });
    expect(near.body.warnings.vat[0]).toMatch(/within the tolerance/);
    const noNumber = await submit(vatBody(id, { invoice_number: 'INV-2', vat_number: undefined }));
    expect(noNumber.status).toBe(200);
    expect(noNumber.body).toMatchObject({ validity_status: 'valid', compliance_status: 'warning' });
    const unregistered = await submit(vatBody('00000000-0000-4000-8000-000000000001'));
    expect(unregistered.status).toBe(200);
    expect(unregistered.body.warnings.entity_jurisdiction[0]).toMatch(/not a registered entity jurisdiction/);
  });
});
