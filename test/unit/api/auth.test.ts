import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  apiError,
  bearerOf,
  issueTokens,
  requireBearer,
  useFakeApi,
} from '../../helpers/api-harness.js';
import { jsonBody, replyJson, type Handler } from '../../helpers/fake-api.js';
import { acceptedUnreadable } from '../../../src/api/index.js';
import type { TaxsyncError } from '../../../src/domain/errors.js';

const CUSTOMER_ID = '3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e';
const customer = { id: CUSTOMER_ID, source: 'api', external_id: 'c-1' };
const CUSTOMER_PATH = `/v1/customers/${CUSTOMER_ID}`;
const START = Date.parse('2025-03-01T10:00:00Z');
const SECOND = 1_000;

function replyHtml(status: number, html: string): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'text/html', 'content-length': String(Buffer.byteLength(html)) });
    res.end(html);
  };
}

/** Everything an operator or a log could see of an error. */
function everythingShown(error: TaxsyncError): string {
  return [error.message, JSON.stringify(error), inspect(error, { depth: 10 }), String(error.stack)].join('\n');
}

describe('tokens', () => {
  const ctx = useFakeApi();

  describe('variant B (POST /v1/auth/token)', () => {
    it('posts the client credentials as JSON and sends the token as a bearer', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));

      await ctx.connect().tax.customers.get(CUSTOMER_ID);

      const [tokenRequest] = ctx.api.requestsTo('POST /v1/auth/token');
      expect(tokenRequest!.headers['content-type']).toBe('application/json');
      expect(tokenRequest!.headers.authorization).toBeUndefined();
      expect(jsonBody(tokenRequest!)).toEqual({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
      expect(ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`)[0]!.headers.authorization).toBe(`Bearer ${ctx.tokens.issued[0]}`);
    });

    it('follows a base URL with a path prefix', async () => {
      ctx.api.on('POST /tax/v1/auth/token', ctx.tokens.handler);
      ctx.api.on(`GET /tax${CUSTOMER_PATH}`, replyJson(200, customer));

      await ctx.connect({ taxUrl: `${ctx.api.url}/tax` }).tax.customers.get(CUSTOMER_ID);

      expect(ctx.api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /tax/v1/auth/token', `GET /tax${CUSTOMER_PATH}`]);
    });
  });

  describe('variant A (POST {authUrl}/oauth/token)', () => {
    it('posts grant_type=client_credentials form-encoded to the auth server, and the tax engine gets only the bearer', async () => {
      const auth = await ctx.server();
      const issuer = issueTokens(auth, { route: 'POST /idp/oauth/token', expiresIn: 3600 });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));

      await ctx.connect({ authUrl: `${auth.url}/idp` }).tax.customers.get(CUSTOMER_ID);

      const [tokenRequest] = auth.requestsTo('POST /idp/oauth/token');
      expect(tokenRequest!.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(tokenRequest!.body))).toEqual({
        grant_type: 'client_credentials',
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      });
      expect(ctx.api.requestsTo('POST /v1/auth/token')).toEqual([]);
      expect(ctx.api.requests.map((r) => bearerOf(r))).toEqual([issuer.issued[0]]);
    });

    it('accepts expires_in as a digit string and a lowercase token_type', async () => {
      const auth = await ctx.server();
      auth.on('POST /oauth/token', replyJson(200, { access_token: 'tok-a', token_type: 'bearer', expires_in: '3600' }));
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));

      await ctx.connect({ authUrl: auth.url }).tax.customers.get(CUSTOMER_ID);

      expect(bearerOf(ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`)[0]!)).toBe('tok-a');
    });
  });

  describe('expiry and renewal (injected clock)', () => {
    it('renews shortly (5 minutes) before expires_in runs out, not earlier', async () => {
      let now = START;
      const issuer = issueTokens(ctx.api, { expiresIn: 3600 });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect({ clock: () => now });

      await tax.customers.get(CUSTOMER_ID);
      now = START + 3299 * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      now = START + 3301 * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      await tax.customers.get(CUSTOMER_ID);

      expect(issuer.issued).toHaveLength(2);
      expect(ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`).map(bearerOf)).toEqual([
        issuer.issued[0],
        issuer.issued[0],
        issuer.issued[1],
        issuer.issued[1],
      ]);
    });

    it('holds a token no longer than the earlier of expire_at and expires_in', async () => {
      let now = START;
      // expires_in says one hour, expire_at says thirty minutes: renewal 5 minutes before 30.
      const issuer = issueTokens(ctx.api, { expiresIn: 3600, expireAt: () => new Date(now + 1800 * SECOND).toISOString() });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect({ clock: () => now });

      await tax.customers.get(CUSTOMER_ID);
      now = START + 1400 * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      expect(issuer.issued).toHaveLength(1);

      now = START + 1501 * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      expect(issuer.issued).toHaveLength(2);
    });

    it('ignores an expire_at already in the past (clock skew) and uses expires_in', async () => {
      let now = START;
      const issuer = issueTokens(ctx.api, { expiresIn: 3600, expireAt: () => new Date(now - 600 * SECOND).toISOString() });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect({ clock: () => now });

      await tax.customers.get(CUSTOMER_ID);
      now = START + 3000 * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      expect(issuer.issued).toHaveLength(1);
    });

    it('reads expires_in 0 as no lifetime given (the documented 24 hours, a 401 still renews), not as a token per call', async () => {
      let now = START;
      const issuer = issueTokens(ctx.api, { expiresIn: 0 });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect({ clock: () => now });

      await tax.customers.get(CUSTOMER_ID);
      await tax.customers.get(CUSTOMER_ID);
      now = START + 23 * 3600 * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      expect(issuer.issued).toHaveLength(1);
    });

    it('renews a short-lived token at half its lifetime', async () => {
      let now = START;
      const issuer = issueTokens(ctx.api, { expiresIn: 60 });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect({ clock: () => now });

      await tax.customers.get(CUSTOMER_ID);
      now = START + 29 * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      expect(issuer.issued).toHaveLength(1);
      now = START + 31 * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      expect(issuer.issued).toHaveLength(2);
    });

    it('keeps using a token still valid when its early renewal fails, and asks again only after a pause, not on every call', async () => {
      let now = START;
      let down = false;
      const issuer = issueTokens(ctx.api, { expiresIn: 3600 });
      ctx.api.on('POST /v1/auth/token', (req, res, raw) => (down ? replyJson(503, { error: 'down' })(req, res, raw) : issuer.handler(req, res, raw)));
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect({ clock: () => now });
      await tax.customers.get(CUSTOMER_ID);

      // In the renewal window (5 minutes before expiry) the token endpoint is down: the token
      // still has minutes to live, so calls go on with it.
      down = true;
      now = START + 3400 * SECOND;
      for (let i = 0; i < 5; i++) await expect(tax.customers.get(CUSTOMER_ID)).resolves.toMatchObject({ id: CUSTOMER_ID });
      expect(ctx.api.requestsTo('POST /v1/auth/token')).toHaveLength(2);

      // After the pause it asks again; once the endpoint is back, the new token is used.
      down = false;
      now = START + 3420 * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      expect(issuer.issued).toHaveLength(2);
      expect(bearerOf(ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`).at(-1)!)).toBe(issuer.issued[1]);
    });

    it('fails the call once the token has really expired and no new one can be had', async () => {
      let now = START;
      let down = false;
      const issuer = issueTokens(ctx.api, { expiresIn: 3600 });
      ctx.api.on('POST /v1/auth/token', (req, res, raw) => (down ? replyJson(503, { error: 'down' })(req, res, raw) : issuer.handler(req, res, raw)));
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect({ clock: () => now });
      await tax.customers.get(CUSTOMER_ID);

      down = true;
      now = START + 3600 * SECOND;
      expect((await apiError(tax.customers.get(CUSTOMER_ID))).code).toBe('API_SERVER_ERROR');
    });

    it('honours a configured renew-before margin', async () => {
      let now = START;
      const issuer = issueTokens(ctx.api, { expiresIn: 86_400 });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect({ clock: () => now, tokenRenewBeforeMs: 3600 * SECOND });

      await tax.customers.get(CUSTOMER_ID);
      now = START + (86_400 - 3601) * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      expect(issuer.issued).toHaveLength(1);
      now = START + (86_400 - 3599) * SECOND;
      await tax.customers.get(CUSTOMER_ID);
      expect(issuer.issued).toHaveLength(2);
    });
  });

  describe('refused credentials', () => {
    it.each([400, 401, 403])('turns a %i from the token endpoint into API_AUTH_FAILED without the secret anywhere', async (status) => {
      ctx.api.on('POST /v1/auth/token', replyJson(status, { error: 'invalid_client' }));
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));

      const error = await apiError(ctx.connect().tax.customers.get(CUSTOMER_ID));

      expect(error.code).toBe('API_AUTH_FAILED');
      expect(error.retryable).toBe(false);
      expect(error.status).toBe(status);
      // The request really carried the secret, so its absence below means something.
      expect(ctx.api.requestsTo('POST /v1/auth/token')[0]!.body).toContain(CLIENT_SECRET);
      expect(everythingShown(error)).not.toContain(CLIENT_SECRET);
      expect(ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`)).toEqual([]);
    });

    it('a 2xx token answer taxsync cannot read fails the write as not sent, never as a write accepted with an unreadable answer', async () => {
      ctx.api.on('POST /v1/auth/token', replyJson(200, { token_type: 'Bearer' }));
      ctx.api.fallback(replyJson(201, { id: CUSTOMER_ID, source: 'api', external_id: 'c-1' }));

      const error = await apiError(ctx.connect().tax.customers.upsert({ source: 'api', external_id: 'c-1', name: 'Ada' }));

      expect(error.code).toBe('API_BAD_RESPONSE');
      expect(error.notSent).toBe(true);
      // A write's own 2xx with an unreadable answer is "applied, never resend"; this one never left.
      expect(acceptedUnreadable(error)).toBe(false);
      expect(ctx.api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/auth/token']);
    });

    it('turns a variant A refusal into API_AUTH_FAILED without the secret anywhere', async () => {
      const auth = await ctx.server();
      auth.on('POST /oauth/token', replyJson(401, { error: 'invalid_client', error_description: 'bad client' }));

      const error = await apiError(ctx.connect({ authUrl: auth.url }).vat.transactionTypes());

      expect(error.code).toBe('API_AUTH_FAILED');
      expect(auth.requests[0]!.body).toContain(CLIENT_SECRET);
      expect(everythingShown(error)).not.toContain(CLIENT_SECRET);
    });

    it('treats a 500 from the token endpoint as a retryable server error, and asks again on the next call', async () => {
      let calls = 0;
      ctx.api.on('POST /v1/auth/token', (req, res, raw) => {
        calls += 1;
        if (calls === 1) return replyJson(500, { error: 'down' })(req, res, raw);
        return ctx.tokens.handler(req, res, raw);
      });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect();

      const error = await apiError(tax.customers.get(CUSTOMER_ID));
      expect(error.code).toBe('API_SERVER_ERROR');
      expect(error.retryable).toBe(true);
      expect(everythingShown(error)).not.toContain(CLIENT_SECRET);

      await expect(tax.customers.get(CUSTOMER_ID)).resolves.toMatchObject({ id: CUSTOMER_ID });
      expect(calls).toBe(2);
    });

    it('refuses a malformed token response without putting the access token into the error', async () => {
      ctx.api.on('POST /v1/auth/token', replyJson(200, { access_token: 'leaky-access-token', token_type: 'MAC', expires_in: 3600 }));

      const error = await apiError(ctx.connect().tax.customers.get(CUSTOMER_ID));

      expect(error.code).toBe('API_BAD_RESPONSE');
      expect(error.message).toContain('token_type');
      expect(everythingShown(error)).not.toContain('leaky-access-token');
    });
  });

  describe('a token that cannot be had', () => {
    // A write whose token fetch failed was never sent: its error must not read as the write's own
    // answer. Taken as "accepted with an unreadable answer" (a 2xx status), the record would be
    // marked applied though the tax engine never saw it; taken as "maybe sent", a VAT submission
    // would be resent and a duplicate answer read as its own acceptance.
    it.each([
      ['answers 200 with a login page', replyHtml(200, '<html><body>Sign in</body></html>')],
      ['answers 200 with an OAuth error and no token', replyJson(200, { error: 'invalid_client' })],
      ['answers 503', replyJson(503, { error: 'down' })],
    ])('is not the write answered when the token endpoint %s: nothing was sent', async (_what, tokenAnswer) => {
      ctx.api.on('POST /v1/auth/token', tokenAnswer);
      ctx.api.on('PUT /v1/customers/', replyJson(201, customer));

      const error = await apiError(ctx.connect().tax.customers.upsert({ source: 'api', external_id: 'c-1' }));

      expect(ctx.api.requestsTo('PUT /v1/customers/')).toEqual([]);
      expect(acceptedUnreadable(error)).toBe(false);
      expect(error).toMatchObject({ notSent: true, ambiguous: false });
      expect(error.message).toContain('POST /v1/auth/token');
      expect(everythingShown(error)).not.toContain(CLIENT_SECRET);
    });
  });

  describe('401 from an API call', () => {
    it('fetches a new token once and retries once with it', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, requireBearer((token) => token === ctx.tokens.issued[1], replyJson(200, customer)));

      await expect(ctx.connect().tax.customers.get(CUSTOMER_ID)).resolves.toMatchObject({ id: CUSTOMER_ID });

      expect(ctx.tokens.issued).toHaveLength(2);
      expect(ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`).map(bearerOf)).toEqual(ctx.tokens.issued);
    });

    it('renews again when the fresh token is refused too (revoked meanwhile), and succeeds with the next', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, requireBearer((token) => token === ctx.tokens.issued[2], replyJson(200, customer)));

      await expect(ctx.connect().tax.customers.get(CUSTOMER_ID)).resolves.toMatchObject({ id: CUSTOMER_ID });

      expect(ctx.tokens.issued).toHaveLength(3);
      expect(ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`).map(bearerOf)).toEqual(ctx.tokens.issued);
    });

    it('gives up after a 401 on the first token and on two fresh ones with API_UNAUTHORIZED, not retryable, and no token in the exchange', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, requireBearer(() => false, replyJson(200, customer)));

      const error = await apiError(ctx.connect().tax.customers.get(CUSTOMER_ID));

      expect(error.code).toBe('API_UNAUTHORIZED');
      expect(error.retryable).toBe(false);
      expect(error.status).toBe(401);
      expect(ctx.tokens.issued).toHaveLength(3);
      expect(ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`)).toHaveLength(3);
      expect(error.http?.response?.status).toBe(401);
      for (const token of ctx.tokens.issued) expect(everythingShown(error)).not.toContain(token);
      expect(everythingShown(error)).not.toContain(CLIENT_SECRET);
    });

    it('renews on a 403 whose WWW-Authenticate says the token is invalid (a gateway refusing an expired token), and retries with the new one', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, (req, res, raw) => {
        if (bearerOf(req) === ctx.tokens.issued[1]) return replyJson(200, customer)(req, res, raw);
        return replyJson(403, { message: 'The incoming token has expired' }, { 'www-authenticate': 'Bearer realm="tax", error="invalid_token", error_description="The access token expired"' })(req, res, raw);
      });

      await expect(ctx.connect().tax.customers.get(CUSTOMER_ID)).resolves.toMatchObject({ id: CUSTOMER_ID });

      expect(ctx.tokens.issued).toHaveLength(2);
    });

    it('does not renew on a 403 for a missing permission (insufficient_scope, or no challenge): API_FORBIDDEN', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(403, { detail: 'forbidden' }, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="customers:read"' }));
      ctx.api.on(`GET /v1/customers/other`, replyJson(403, { detail: 'forbidden' }));
      const { tax } = ctx.connect();

      expect((await apiError(tax.customers.get(CUSTOMER_ID))).code).toBe('API_FORBIDDEN');
      expect((await apiError(tax.customers.get('other'))).code).toBe('API_FORBIDDEN');
      expect(ctx.tokens.issued).toHaveLength(1);
    });

    it('retries a VAT submission rejected with 401 once, with the new token', async () => {
      ctx.api.on(
        'POST /api/vat/v1/transactions/',
        requireBearer(
          (token) => token === ctx.tokens.issued[1],
          replyJson(201, { id: '00000000-0000-4000-8000-000000000001', invoice_number: 'INV-1' }),
        ),
      );

      const result = await ctx.connect().vat.submitTransaction({
        entity_jurisdiction: '5b1e1f38-6c1a-4c4e-9d7e-1a2b3c4d5e6f',
        invoice_number: 'INV-1',
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
      });

      expect(result.status).toBe(201);
      expect(ctx.api.requestsTo('POST /api/vat/v1/transactions/')).toHaveLength(2);
    });
  });

  describe('concurrent callers', () => {
    it('share one token request among 20 parallel calls', async () => {
      const issuer = issueTokens(ctx.api, { delayMs: 50 });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      const { tax } = ctx.connect();

      const results = await Promise.all(Array.from({ length: 20 }, () => tax.customers.get(CUSTOMER_ID)));

      expect(results).toHaveLength(20);
      expect(issuer.issued).toHaveLength(1);
      const calls = ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`);
      expect(calls).toHaveLength(20);
      expect(new Set(calls.map(bearerOf))).toEqual(new Set([issuer.issued[0]]));
    });

    it('renew once when 20 parallel calls all meet a 401', async () => {
      const issuer = issueTokens(ctx.api, { delayMs: 20 });
      ctx.api.on(`GET ${CUSTOMER_PATH}`, requireBearer((token) => token !== issuer.issued[0], replyJson(200, customer)));
      const { tax } = ctx.connect();

      await Promise.all(Array.from({ length: 20 }, () => tax.customers.get(CUSTOMER_ID)));

      expect(issuer.issued).toHaveLength(2);
      const calls = ctx.api.requestsTo(`GET ${CUSTOMER_PATH}`);
      expect(calls).toHaveLength(40);
      expect(calls.filter((r) => bearerOf(r) === issuer.issued[1])).toHaveLength(20);
    });

    it('let VAT and tax calls share the one token', async () => {
      ctx.api.on(`GET ${CUSTOMER_PATH}`, replyJson(200, customer));
      ctx.api.on('GET /api/vat/v1/transaction-types/', replyJson(200, []));
      const clients = ctx.connect();

      await Promise.all([clients.tax.customers.get(CUSTOMER_ID), clients.vat.transactionTypes(), clients.tax.customers.get(CUSTOMER_ID)]);

      expect(ctx.tokens.issued).toHaveLength(1);
    });
  });
});
