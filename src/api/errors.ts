import { TaxsyncError, type FieldErrors } from '../domain/errors.js';
import { summariseFields } from '../domain/field-errors.js';
import type { HttpResponse } from './http.js';

/**
 * Parses Retry-After as delay-seconds or an HTTP date, in ms; undefined when absent or unreadable.
 * Seconds with a fraction are read too: RFC 9110 says integers, but Shopify sends `2.0`.
 */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Field errors from any of the bodies the two services use: VAT `{error, details: {field: [msg]}}`,
 * registrations `{detail}` (no field), and for the tax engine (shape not shown) the same two.
 */
/** Service texts kept in messages and field errors are cut here, so entries and logs stay small. */
const TEXT_LIMIT = 500;
const MAX_FIELDS = 50;
const clip = (text: string) => (text.length <= TEXT_LIMIT ? text : `${text.slice(0, TEXT_LIMIT)}…`);

export function extractErrorBody(body: unknown): { message?: string; fields?: FieldErrors } {
  if (typeof body !== 'object' || body === null) return {};
  const record = body as Record<string, unknown>;
  const raw =
    typeof record.error === 'string'
      ? record.error
      : typeof record.detail === 'string'
        ? record.detail
        : typeof record.message === 'string'
          ? record.message
          : undefined;
  const message = raw === undefined ? undefined : clip(raw);
  let fields: FieldErrors | undefined;
  if (typeof record.details === 'object' && record.details !== null && !Array.isArray(record.details)) {
    fields = {};
    for (const [field, messages] of Object.entries(record.details as Record<string, unknown>).slice(0, MAX_FIELDS)) {
      if (Array.isArray(messages)) fields[clip(field)] = messages.slice(0, 10).map((m) => clip(String(m)));
      else if (typeof messages === 'string') fields[clip(field)] = [clip(messages)];
    }
  }
  return { ...(message === undefined ? {} : { message }), ...(fields === undefined ? {} : { fields }) };
}

/** A 422 from VAT submission whose only field error is on invoice_number (DESIGN.md, Errors). */
export function isVatDuplicate(status: number, fields: FieldErrors | undefined): boolean {
  if (status !== 422 || fields === undefined) return false;
  const keys = Object.keys(fields);
  return keys.length === 1 && keys[0] === 'invoice_number';
}

export interface ClassifyOptions {
  /** The endpoint name for messages, e.g. "PUT /v1/transactions/". */
  endpoint: string;
  /** Set for the VAT submission endpoint, where a duplicate number has its own code. */
  vatSubmission?: boolean;
  now?: number;
}

/** Turns a non-2xx response into a TaxsyncError with a stable code and a retry decision. */
export function errorFromResponse(res: HttpResponse, options: ClassifyOptions): TaxsyncError {
  const { message, fields } = extractErrorBody(res.body);
  const status = res.status;
  const retryAfterMs = parseRetryAfter(res.headers['retry-after'], options.now);
  const said = message === undefined ? '' : `: ${message}`;
  // A 5xx to a VAT submission (not idempotent) may come after the service stored it, Retry-After or not.
  const maybeStored = options.vatSubmission === true && status >= 500;
  const base = { status, http: res.exchange, ...(fields === undefined ? {} : { fields }), ...(maybeStored ? { ambiguous: true } : {}) };
  const where = `${options.endpoint} answered ${status}`;

  if (status === 429 || (status === 503 && retryAfterMs !== undefined)) {
    return new TaxsyncError('API_RATE_LIMITED', `${where} (rate limited)${said}`, {
      ...base,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (status >= 500 || status === 408) {
    return new TaxsyncError('API_SERVER_ERROR', `${where}${said}`, base);
  }
  if (status === 401) return new TaxsyncError('API_UNAUTHORIZED', `${where} (token rejected)${said}`, base);
  if (status === 403) return new TaxsyncError('API_FORBIDDEN', `${where} (permission missing)${said}`, base);
  if (status === 404) return new TaxsyncError('API_NOT_FOUND', `${where} (not found)${said}`, base);
  if (options.vatSubmission === true && isVatDuplicate(status, fields)) {
    return new TaxsyncError('VAT_DUPLICATE', `${where}: invoice_number already submitted for this entity jurisdiction`, base);
  }
  if (status === 400 || status === 409 || status === 422) {
    return new TaxsyncError('API_INVALID', `${where}${said}${describeFields(fields)}`, base);
  }
  return new TaxsyncError('API_UNEXPECTED_STATUS', `${where}${said}`, base);
}

export function describeFields(fields: FieldErrors | undefined): string {
  if (fields === undefined || Object.keys(fields).length === 0) return '';
  return ` (${summariseFields(fields)})`;
}
