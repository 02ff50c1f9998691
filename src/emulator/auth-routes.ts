import { OAuthForm, TokenBody } from './contract/tax-requests.js';
import { errorAnswer, issuesToFields, ok, type Answer } from './answer.js';
import { defineEndpoint, type RouteContext } from './routing.js';
import { varyToken } from './variety/tax.js';

const NO_STORE = { 'cache-control': 'no-store' };

/**
 * Token endpoints (tax-calculation-api.md, Authentication): variant B takes JSON
 * `{client_id, client_secret}` (docs/decisions.md), variant A the OAuth form. Both answer a JWT.
 */
export function registerAuthRoutes(ctx: RouteContext): void {
  const { authority, variety } = ctx;
  const vary = (token: object, clientId: string) => varyToken(token, variety.dice(`token:${clientId}`));

  defineEndpoint(
    ctx,
    'auth.token',
    (req): Answer => {
      const parsed = TokenBody.safeParse(req.body);
      if (!parsed.success) {
        return errorAnswer(400, 'invalid token request: send JSON {client_id, client_secret}', issuesToFields(parsed.error.issues));
      }
      const token = authority.issue(parsed.data.client_id, parsed.data.client_secret);
      if (token === undefined) return errorAnswer(401, 'invalid client credentials');
      return { ...ok(vary(token, parsed.data.client_id)), headers: NO_STORE };
    },
    { auth: false },
  );

  defineEndpoint(
    ctx,
    'auth.oauthToken',
    (req): Answer => {
      const body = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, unknown>;
      if (body.grant_type !== 'client_credentials') {
        return { status: 400, body: { error: 'unsupported_grant_type', error_description: 'grant_type must be client_credentials' } };
      }
      const parsed = OAuthForm.safeParse(body);
      if (!parsed.success) {
        return { status: 400, body: { error: 'invalid_request', error_description: 'send the form fields grant_type, client_id and client_secret' } };
      }
      const token = authority.issue(parsed.data.client_id, parsed.data.client_secret);
      if (token === undefined) return { status: 401, body: { error: 'invalid_client', error_description: 'invalid client credentials' } };
      const { expire_at: _expireAt, ...variantA } = token;
      return { status: 200, body: vary(variantA, parsed.data.client_id), headers: NO_STORE };
    },
    { auth: false },
  );

  defineEndpoint(ctx, 'auth.verify', (req) => ok(req.claims));
}
