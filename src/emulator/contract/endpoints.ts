/**
 * The routes of both documents as the emulator serves them, named once. The names are the
 * emulator's own vocabulary for fault rules (`route: "vat.submit"`) and the request log; `{module}`
 * is the VAT module segment (vat-compliance-api.md writes it as `vat`).
 */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const route = (method: Method, path: string) => ({ method, path });

export const ROUTES = {
  // tax-calculation-api.md, "Authentication" and "Endpoints"
  'auth.token': route('POST', '/v1/auth/token'),
  'auth.oauthToken': route('POST', '/oauth/token'),
  'auth.verify': route('POST', '/v1/auth/verify'),
  'customers.list': route('GET', '/v1/customers/'),
  'customers.upsert': route('PUT', '/v1/customers/'),
  'customers.get': route('GET', '/v1/customers/{id}'),
  'customers.getByKey': route('GET', '/v1/customers/{source}/{external_id}'),
  'customers.delete': route('DELETE', '/v1/customers/{id}'),
  'customers.deleteByKey': route('DELETE', '/v1/customers/{source}/{external_id}'),
  'exemptions.list': route('GET', '/v1/exemptions/'),
  'exemptions.create': route('POST', '/v1/exemptions/'),
  'exemptions.get': route('GET', '/v1/exemptions/{id}'),
  'exemptions.update': route('PUT', '/v1/exemptions/{id}'),
  'exemptions.delete': route('DELETE', '/v1/exemptions/{id}'),
  'transactions.list': route('GET', '/v1/transactions/'),
  'transactions.upsert': route('PUT', '/v1/transactions/'),
  'transactions.get': route('GET', '/v1/transactions/{id}'),
  'transactions.getByKey': route('GET', '/v1/transactions/{source}/{external_id}'),
  'transactions.delete': route('DELETE', '/v1/transactions/{id}'),
  'transactions.deleteByKey': route('DELETE', '/v1/transactions/{source}/{external_id}'),
  // vat-compliance-api.md, "Endpoints"
  'vat.submit': route('POST', '/api/{module}/v1/transactions/'),
  'vat.types': route('GET', '/api/{module}/v1/transaction-types/'),
  'registrations.list': route('GET', '/registrations/v1/registrations/'),
  'registrations.create': route('POST', '/registrations/v1/registrations/'),
  'registrations.get': route('GET', '/registrations/v1/registrations/{id}/'),
  'registrations.update': route('PUT', '/registrations/v1/registrations/{id}/'),
  'registrations.patch': route('PATCH', '/registrations/v1/registrations/{id}/'),
  'registrations.delete': route('DELETE', '/registrations/v1/registrations/{id}/'),
  'filings.create': route('POST', '/api/filing/v1/filings/'),
  'filings.get': route('GET', '/api/filing/v1/filings/{id}/'),
  'filings.files': route('GET', '/api/filing/v1/filings/{id}/files/'),
  'filings.boxes': route('GET', '/api/filing/v1/filings/{id}/draft-return-boxes/'),
  'filings.approve': route('POST', '/api/filing/v1/filings/{id}/approve/'),
} as const;

export type RouteName = keyof typeof ROUTES;

/** Page size of the customer and transaction lists (tax-calculation-api.md, "Limits"). */
export const PAGE_LIMIT_DEFAULT = 20;
export const PAGE_LIMIT_MAX = 100;

/**
 * `api` plus nine platform identifiers the document leaves out as brand names; the emulator
 * accepts the same nine taxsync assumes (DESIGN.md, "Sources"), and the list is an option.
 */
export const DEFAULT_SOURCES: readonly string[] = [
  'api', 'shopify', 'stripe', 'woocommerce', 'bigcommerce', 'quickbooks', 'xero', 'netsuite', 'zoho', 'chargebee',
];
