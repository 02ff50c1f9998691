import type { HttpMethod } from './http.js';

/**
 * Every endpoint of both documents, once. Clients build paths from here; metrics label calls by
 * `name`; the emulator serves the same table. `{module}` is the VAT module segment (a setting).
 */
export const ENDPOINTS = {
  'auth.token': { method: 'POST', path: '/v1/auth/token' },
  'auth.oauthToken': { method: 'POST', path: '/oauth/token' },
  'auth.verify': { method: 'POST', path: '/v1/auth/verify' },
  'customers.list': { method: 'GET', path: '/v1/customers/' },
  'customers.upsert': { method: 'PUT', path: '/v1/customers/' },
  'customers.get': { method: 'GET', path: '/v1/customers/{id}' },
  'customers.getByKey': { method: 'GET', path: '/v1/customers/{source}/{external_id}' },
  'customers.delete': { method: 'DELETE', path: '/v1/customers/{id}' },
  'customers.deleteByKey': { method: 'DELETE', path: '/v1/customers/{source}/{external_id}' },
  'exemptions.list': { method: 'GET', path: '/v1/exemptions/' },
  'exemptions.create': { method: 'POST', path: '/v1/exemptions/' },
  'exemptions.get': { method: 'GET', path: '/v1/exemptions/{id}' },
  'exemptions.update': { method: 'PUT', path: '/v1/exemptions/{id}' },
  'exemptions.delete': { method: 'DELETE', path: '/v1/exemptions/{id}' },
  'transactions.list': { method: 'GET', path: '/v1/transactions/' },
  'transactions.upsert': { method: 'PUT', path: '/v1/transactions/' },
  'transactions.get': { method: 'GET', path: '/v1/transactions/{id}' },
  'transactions.getByKey': { method: 'GET', path: '/v1/transactions/{source}/{external_id}' },
  'transactions.delete': { method: 'DELETE', path: '/v1/transactions/{id}' },
  'transactions.deleteByKey': { method: 'DELETE', path: '/v1/transactions/{source}/{external_id}' },
  'vat.submit': { method: 'POST', path: '/api/{module}/v1/transactions/' },
  'vat.types': { method: 'GET', path: '/api/{module}/v1/transaction-types/' },
  'registrations.list': { method: 'GET', path: '/registrations/v1/registrations/' },
  'registrations.create': { method: 'POST', path: '/registrations/v1/registrations/' },
  'registrations.get': { method: 'GET', path: '/registrations/v1/registrations/{id}/' },
  'registrations.update': { method: 'PUT', path: '/registrations/v1/registrations/{id}/' },
  'registrations.patch': { method: 'PATCH', path: '/registrations/v1/registrations/{id}/' },
  'registrations.delete': { method: 'DELETE', path: '/registrations/v1/registrations/{id}/' },
  'filings.create': { method: 'POST', path: '/api/filing/v1/filings/' },
  'filings.get': { method: 'GET', path: '/api/filing/v1/filings/{id}/' },
  'filings.files': { method: 'GET', path: '/api/filing/v1/filings/{id}/files/' },
  'filings.boxes': { method: 'GET', path: '/api/filing/v1/filings/{id}/draft-return-boxes/' },
  'filings.approve': { method: 'POST', path: '/api/filing/v1/filings/{id}/approve/' },
} as const satisfies Record<string, { method: HttpMethod; path: string }>;

export type EndpointName = keyof typeof ENDPOINTS;

/** Fills `{param}` placeholders, each value percent-encoded as one path segment. */
export function endpointPath(name: EndpointName, params: Record<string, string> = {}): string {
  return ENDPOINTS[name].path.replace(/\{([a-z_]+)\}/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined || value === '') throw new Error(`endpoint ${name} needs a value for {${key}}`);
    return encodeURIComponent(value);
  });
}

/** "PUT /v1/transactions/" for messages and logs. */
export function endpointLabel(name: EndpointName): string {
  return `${ENDPOINTS[name].method} ${ENDPOINTS[name].path}`;
}
