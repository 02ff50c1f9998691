import { describe, expect, it } from 'vitest';
import { TaxsyncError } from '../../../src/domain/errors.js';
import type { HttpResponse } from '../../../src/api/http.js';
import { endpointName, observeCall, type ApiCall } from '../../../src/api/observe.js';

describe('API call observation', () => {
  it('labels calls by endpoint name, whatever VAT module is configured', () => {
    expect(endpointName('PUT /v1/transactions/')).toBe('transactions.upsert');
    expect(endpointName('GET /v1/customers/{source}/{external_id}')).toBe('customers.getByKey');
    expect(endpointName('POST /api/vat-eu/v1/transactions/')).toBe('vat.submit');
    expect(endpointName('POST /api/filing/v1/filings/')).toBe('filings.create');
    expect(endpointName('GET /v1/customers/123')).toBe('other');
  });

  it('reports the status, or the error code when no response came back, and rethrows', async () => {
    const calls: ApiCall[] = [];
    const res = await observeCall((c) => calls.push(c), { service: 'tax', endpoint: 'PUT /v1/transactions/' }, () =>
      Promise.resolve({ status: 201 } as HttpResponse),
    );
    expect(res.status).toBe(201);
    const timeout = new TaxsyncError('API_TIMEOUT', 'timed out');
    await expect(observeCall((c) => calls.push(c), { service: 'tax', endpoint: 'PUT /v1/transactions/' }, () => Promise.reject(timeout))).rejects.toBe(timeout);
    expect(calls.map(({ service, endpoint, status }) => ({ service, endpoint, status }))).toEqual([
      { service: 'tax', endpoint: 'transactions.upsert', status: '201' },
      { service: 'tax', endpoint: 'transactions.upsert', status: 'API_TIMEOUT' },
    ]);
    expect(calls.every((c) => c.seconds >= 0)).toBe(true);
  });

  it('never lets a failing observer fail the request', async () => {
    const res = await observeCall(
      () => {
        throw new Error('boom');
      },
      { service: 'tax', endpoint: 'PUT /v1/transactions/' },
      () => Promise.resolve({ status: 200 } as HttpResponse),
    );
    expect(res.status).toBe(200);
  });
});
