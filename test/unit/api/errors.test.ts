import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { VatTransactionRequest } from '../../../src/api/index.js';
import { EXCHANGE_BODY_LIMIT } from '../../../src/api/http.js';
import type { TaxsyncError } from '../../../src/domain/errors.js';
import { CLIENT_SECRET, apiError, useFakeApi } from '../../helpers/api-harness.js';
import { closedPort, destroySocket, hang, replyJson } from '../../helpers/fake-api.js';

const CUSTOMER_ID = '3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e';
const CUSTOMER_PATH = `/v1/customers/${CUSTOMER_ID}`;
const VAT_PATH = '/api/vat/v1/transactions/';
const REGISTRATION_ID = '1d4e2f3a-5b6c-4d7e-8f90-a1b2c3d4e5f6';
const REGISTRATION_PATH = `/registrations/v1/registrations/${REGISTRATION_ID}/`;

const vatRequest: VatTransactionRequest = {
  entity_jurisdiction: '5b1e1f38-6c1a-4c4e-9d7e-1a2b3c4d5e6f',
  invoice_number: 'INV-2025-0001',
  invoice_date: '2025-03-01',
  partner_name: 'Muster GmbH',
  partner_country: 'DE',
  net: '100.00',
  vat: '19.00',
  gross: '119.00',
  vat_rate: '19.00',
  vat_rate_type: 'standard',
  currency: 'EUR',
  reporting_period: '2025-03-01',
  transaction_type_id: '9a7b5c3d-1e2f-4a6b-8c0d-2e4f6a8b0c1d',
  source: 'api',
};

/**
 * Deadlines for a server that hangs, never timing assertions: long enough that the token request
 * on a loaded machine still makes it, short enough for a quick test (with its own test timeout).
 */
const SHORT_TIMEOUTS = { connectMs: 5_000, headersMs: 2_000, bodyMs: 2_000 };
const HANG_TEST = { timeout: 20_000 };

describe('API error classification', () => {
  const ctx = useFakeApi();

  describe('rate limits and server errors', () => {
    it('turns 429 with Retry-After in seconds into API_RATE_LIMITED with retryAfterMs', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(429, { detail: 'slow down' }, { 'retry-after': '7' }));

      const error = await apiError(ctx.connect().tax.customers.get(CUSTOMER_ID));

      expect(error.code).toBe('API_RATE_LIMITED');
      expect(error.retryable).toBe(true);
      expect(error.retryAfterMs).toBe(7_000);
      expect(error.status).toBe(429);
      expect(error.http?.response?.headers).toMatchObject({ 'retry-after': '7' });
    });

    it('turns 429 with Retry-After as an HTTP date into API_RATE_LIMITED with the time left', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, (req, res, raw) =>
        replyJson(429, undefined, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() })(req, res, raw),
      );

      const error = await apiError(ctx.connect().tax.customers.get(CUSTOMER_ID));

      expect(error.code).toBe('API_RATE_LIMITED');
      // The date has whole seconds and the clock moves on: anything in a generous window is right.
      expect(error.retryAfterMs).toBeGreaterThan(60_000);
      expect(error.retryAfterMs).toBeLessThanOrEqual(120_000);
    });

    it('turns 429 without a readable Retry-After into API_RATE_LIMITED without retryAfterMs', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(429, undefined, { 'retry-after': 'soon' }));

      const error = await apiError(ctx.connect().tax.customers.get(CUSTOMER_ID));

      expect(error.code).toBe('API_RATE_LIMITED');
      expect(error.retryAfterMs).toBeUndefined();
    });

    it('turns 503 with Retry-After into API_RATE_LIMITED', async () => {
      ctx.api.on(`POST ${VAT_PATH}`, replyJson(503, { error: 'maintenance' }, { 'retry-after': '30' }));

      const error = await apiError(ctx.connect().vat.submitTransaction(vatRequest));

      expect(error.code).toBe('API_RATE_LIMITED');
      expect(error.retryAfterMs).toBe(30_000);
      expect(error.retryable).toBe(true);
    });

    it.each([503, 500, 502, 408])('turns %i without Retry-After into a retryable API_SERVER_ERROR', async (status) => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(status, { error: 'upstream exploded' }));

      const error = await apiError(ctx.connect().tax.customers.get(CUSTOMER_ID));

      expect(error.code).toBe('API_SERVER_ERROR');
      expect(error.retryable).toBe(true);
      expect(error.retryAfterMs).toBeUndefined();
      expect(error.status).toBe(status);
      expect(error.message).toContain('upstream exploded');
    });
  });

  describe('transport failures', () => {
    it('turns a server that never sends headers into API_TIMEOUT, retryable and ambiguous', HANG_TEST, async () => {
      ctx.api.on(`POST ${VAT_PATH}`, hang);

      const error = await apiError(ctx.connect({ timeouts: SHORT_TIMEOUTS }).vat.submitTransaction(vatRequest));

      expect(error.code).toBe('API_TIMEOUT');
      expect(error.retryable).toBe(true);
      expect(error.ambiguous).toBe(true);
      expect(error.http?.request).toMatchObject({ method: 'POST', url: `${ctx.api.url}${VAT_PATH}` });
      expect(error.http?.response).toBeUndefined();
      expect(ctx.api.requestsTo(`POST ${VAT_PATH}`)).toHaveLength(1);
    });

    it('turns a body that stops half-way into API_TIMEOUT, ambiguous', HANG_TEST, async () => {
      ctx.api.on(`POST ${VAT_PATH}`, (_req, res) => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.write('{"id":');
      });

      const error = await apiError(ctx.connect({ timeouts: SHORT_TIMEOUTS }).vat.submitTransaction(vatRequest));

      expect(error.code).toBe('API_TIMEOUT');
      expect(error.ambiguous).toBe(true);
    });

    it('turns a refused connection into API_NETWORK, retryable and not ambiguous', async () => {
      const port = await closedPort();

      const error = await apiError(ctx.connect({ vatUrl: `http://127.0.0.1:${port}` }).vat.submitTransaction(vatRequest));

      expect(error.code).toBe('API_NETWORK');
      expect(error.retryable).toBe(true);
      expect(error.ambiguous).toBe(false);
      expect(error.message).toContain('ECONNREFUSED');
    });

    it('turns a socket destroyed after the request arrived into API_NETWORK, ambiguous, without resending', async () => {
      ctx.api.on(`POST ${VAT_PATH}`, destroySocket);

      const error = await apiError(ctx.connect().vat.submitTransaction(vatRequest));

      expect(error.code).toBe('API_NETWORK');
      expect(error.retryable).toBe(true);
      expect(error.ambiguous).toBe(true);
      expect(ctx.api.requestsTo(`POST ${VAT_PATH}`)).toHaveLength(1);
    });
  });

  describe('rejections', () => {
    it('turns a VAT 422 {error, details} into API_INVALID with the field errors', async () => {
      const details = { gross: ['net + vat must equal gross'], vat_number: ['does not match the format for DE'] };
      ctx.api.on(`POST ${VAT_PATH}`, replyJson(422, { error: 'Validation failed', details }));

      const error = await apiError(ctx.connect().vat.submitTransaction(vatRequest));

      expect(error.code).toBe('API_INVALID');
      expect(error.retryable).toBe(false);
      expect(error.status).toBe(422);
      expect(error.fields).toEqual(details);
      expect(error.message).toContain('Validation failed');
      expect(error.message).toContain('gross: net + vat must equal gross');
      expect(error.toJSON()).toMatchObject({ code: 'API_INVALID', fields: details });
    });

    it('turns a VAT 422 whose only field error is invoice_number into VAT_DUPLICATE', async () => {
      const details = { invoice_number: ['invoice_number must be unique per entity jurisdiction'] };
      ctx.api.on(`POST ${VAT_PATH}`, replyJson(422, { error: 'Validation failed', details }));

      const error = await apiError(ctx.connect().vat.submitTransaction(vatRequest));

      expect(error.code).toBe('VAT_DUPLICATE');
      expect(error.retryable).toBe(false);
      expect(error.fields).toEqual(details);
      expect(error.ambiguous).toBe(false);
    });

    it('keeps a VAT 422 on invoice_number plus another field as API_INVALID', async () => {
      ctx.api.on(
        `POST ${VAT_PATH}`,
        replyJson(422, { error: 'Validation failed', details: { invoice_number: ['not unique'], net: ['must be positive'] } }),
      );

      const error = await apiError(ctx.connect().vat.submitTransaction(vatRequest));

      expect(error.code).toBe('API_INVALID');
    });

    it('does not read an invoice_number 422 outside VAT submission as a duplicate', async () => {
      ctx.api.on('PUT /v1/transactions/', replyJson(422, { error: 'invalid', details: { invoice_number: ['unknown field'] } }));

      const error = await apiError(ctx.connect().tax.transactions.upsert({ source: 'api', external_id: 'inv-1' }));

      expect(error.code).toBe('API_INVALID');
    });

    it('turns a registration 400 {detail} into API_INVALID whose message carries the detail', async () => {
      const detail = 'The combination of taxable_jurisdiction DE and registration_type suts_registration is not configured';
      ctx.api.on('POST /registrations/v1/registrations/', replyJson(400, { detail }));

      const error = await apiError(
        ctx.connect().vat.registrations.create({
          taxable_jurisdiction: 'DE',
          entity: 'c0ffee00-1234-4abc-9def-0123456789ab',
          registration_type: 'suts_registration',
        }),
      );

      expect(error.code).toBe('API_INVALID');
      expect(error.status).toBe(400);
      expect(error.message).toContain(detail);
    });

    // Error bodies in shapes the documents do not show: what other stacks answer (a gateway, a
    // framework's default, a later version). The operator must still see the message and the
    // fields in the dead letter, and a duplicate invoice number must still be recognised.
    it.each([
      ['errors as a map of fields (Rails, Laravel)', 400, { message: 'The given data was invalid.', errors: { email: ['must be an email'], 'addresses.billing.country': ['unknown country'] } }, 'The given data was invalid.', { email: ['must be an email'], 'addresses.billing.country': ['unknown country'] }],
      ['errors as one string', 400, { errors: 'source must be one of the known sources' }, 'source must be one of the known sources', undefined],
      ['field paths with indices, lines[0].amount and lines.0.amount, messages as objects', 422, { error: 'invalid', details: { 'items[0].unit_price': [{ message: 'required', code: 'missing' }], 'items.1.quantity': 'must be positive' } }, 'invalid', { 'items[0].unit_price': ['required'], 'items.1.quantity': ['must be positive'] }],
      ['nested field errors (a serializer of a list)', 400, { error: 'invalid', details: { items: [{}, { unit_price: ['required'] }] } }, 'invalid', { 'items[1].unit_price': ['required'] }],
      ['error as an object with message and details', 400, { error: { message: 'Request validation failed', details: { external_id: ['too long'] } } }, 'Request validation failed', { external_id: ['too long'] }],
      ['errors as a list of {field, message}', 422, { errors: [{ field: 'currency_details.currency', message: 'unknown currency' }, { field: 'transaction_date', message: 'not a date' }] }, undefined, { 'currency_details.currency': ['unknown currency'], transaction_date: ['not a date'] }],
      ['a list of {loc, msg} (FastAPI)', 422, { detail: [{ loc: ['body', 'items', 0, 'unit_price'], msg: 'field required', type: 'missing' }] }, undefined, { 'items[0].unit_price': ['field required'] }],
    ])('reads a 4xx whose body has %s: message and fields kept', async (_what, status, body, message, fields) => {
      ctx.api.on('PUT /v1/transactions/', replyJson(status, body));

      const error = await apiError(ctx.connect().tax.transactions.upsert({ source: 'api', external_id: 'inv-1' }));

      expect(error.code).toBe('API_INVALID');
      if (message !== undefined) expect(error.message).toContain(message);
      expect(error.fields).toEqual(fields);
      if (fields !== undefined) for (const field of Object.keys(fields)) expect(error.message).toContain(field);
    });

    it('reads a registration 400 whose body is the map of field errors itself (Django REST framework)', async () => {
      ctx.api.on('POST /registrations/v1/registrations/', replyJson(400, { number: ['Ensure this field has no more than 20 characters.'], iban: ['Enter a valid IBAN.'] }));

      const error = await apiError(ctx.connect().vat.registrations.create({ taxable_jurisdiction: 'DE', entity: 'c0ffee00-1234-4abc-9def-0123456789ab' }));

      expect(error.code).toBe('API_INVALID');
      expect(error.fields).toEqual({ number: ['Ensure this field has no more than 20 characters.'], iban: ['Enter a valid IBAN.'] });
    });

    it('recognises a duplicate invoice number whose field error comes under errors', async () => {
      ctx.api.on(`POST ${VAT_PATH}`, replyJson(422, { error: 'Validation failed', errors: { invoice_number: ['already used for this entity jurisdiction'] } }));

      const error = await apiError(ctx.connect().vat.submitTransaction(vatRequest));

      expect(error.code).toBe('VAT_DUPLICATE');
    });

    it('turns 403 into API_FORBIDDEN, not retryable', async () => {
      ctx.api.on(`PATCH ${REGISTRATION_PATH}`, replyJson(403, { detail: 'You lack REGISTRATION_EDIT' }));

      const error = await apiError(ctx.connect().vat.registrations.patch(REGISTRATION_ID, { iban: 'DE89370400440532013000' }));

      expect(error.code).toBe('API_FORBIDDEN');
      expect(error.retryable).toBe(false);
      expect(error.message).toContain('REGISTRATION_EDIT');
    });

    it('turns 404 into API_NOT_FOUND', async () => {
      ctx.api.on(`GET ${REGISTRATION_PATH}`, replyJson(404, { detail: 'Not found.' }));
      ctx.api.on(`DELETE ${CUSTOMER_PATH}`, replyJson(404));
      const clients = ctx.connect();

      expect((await apiError(clients.vat.registrations.get(REGISTRATION_ID))).code).toBe('API_NOT_FOUND');
      expect((await apiError(clients.tax.customers.delete(CUSTOMER_ID))).code).toBe('API_NOT_FOUND');
    });

    it('turns a status the contract does not describe into API_UNEXPECTED_STATUS', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(418, { message: 'teapot' }));

      const error = await apiError(ctx.connect().tax.customers.get(CUSTOMER_ID));

      expect(error.code).toBe('API_UNEXPECTED_STATUS');
      expect(error.message).toContain('teapot');
    });
  });

  describe('the recorded HTTP exchange (for dead-letter entries)', () => {
    function shown(error: TaxsyncError): string {
      return [JSON.stringify(error), JSON.stringify(error.http), inspect(error, { depth: 10 }), error.message].join('\n');
    }

    it('holds method, URL, request body and response, but neither the bearer token nor the client secret', async () => {
      ctx.api.on('PUT /v1/customers/', replyJson(500, { error: 'boom' }, { 'x-request-id': 'req-42', 'set-cookie': 'session=abc' }));

      const error = await apiError(ctx.connect().tax.customers.upsert({ source: 'api', external_id: 'c-1', name: 'Ada' }));

      expect(error.http).toEqual({
        request: { method: 'PUT', url: `${ctx.api.url}/v1/customers/`, body: JSON.stringify({ source: 'api', external_id: 'c-1', name: 'Ada' }) },
        response: { status: 500, body: JSON.stringify({ error: 'boom' }), headers: { 'content-type': 'application/json', 'x-request-id': 'req-42' } },
      });
      expect(ctx.tokens.issued).toHaveLength(1);
      expect(shown(error)).not.toContain(ctx.tokens.issued[0]);
      expect(shown(error)).not.toContain('Bearer');
      expect(shown(error)).not.toContain(CLIENT_SECRET);
      expect(shown(error)).not.toContain('session=abc');
    });

    it('holds neither secret after a 401 and a 401 on each renewed token', async () => {
      ctx.api.on(`POST ${VAT_PATH}`, replyJson(401, { error: 'invalid token', details: {} }));

      const error = await apiError(ctx.connect().vat.submitTransaction(vatRequest));

      expect(error.code).toBe('API_UNAUTHORIZED');
      expect(ctx.tokens.issued).toHaveLength(3);
      for (const token of ctx.tokens.issued) expect(shown(error)).not.toContain(token);
      expect(shown(error)).not.toContain(CLIENT_SECRET);
    });

    it('truncates long request and response bodies', async () => {
      const longComment = 'x'.repeat(10_000);
      ctx.api.on('PUT /v1/customers/', replyJson(422, { error: 'too long', details: { comment: ['y'.repeat(10_000)] } }));

      const error = await apiError(ctx.connect().tax.customers.upsert({ source: 'api', external_id: 'c-1', comment: longComment }));

      const { request, response } = error.http!;
      expect(request.body!.length).toBeLessThan(EXCHANGE_BODY_LIMIT + 100);
      expect(request.body).toContain('[truncated');
      expect(response!.body!.length).toBeLessThan(EXCHANGE_BODY_LIMIT + 100);
      expect(response!.body).toContain('[truncated');
      expect(JSON.stringify(error.http).length).toBeLessThan(2 * EXCHANGE_BODY_LIMIT + 1_000);
    });
  });
});
