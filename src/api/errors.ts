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

/** Service texts kept in messages and field errors are cut here, so entries and logs stay small. */
const TEXT_LIMIT = 500;
const MAX_FIELDS = 50;
const MAX_DEPTH = 6;
const clip = (text: string) => (text.length <= TEXT_LIMIT ? text : `${text.slice(0, TEXT_LIMIT)}…`);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const firstText = (record: Record<string, unknown>, keys: readonly string[]): string | undefined => {
  for (const key of keys) if (typeof record[key] === 'string' && record[key] !== '') return record[key];
  return undefined;
};

// The words services use for one error's text, and for the field it is about.
const MESSAGE_KEYS = ['message', 'msg', 'detail', 'title', 'description', 'error_description', 'error', 'reason'] as const;
const FIELD_KEYS = ['field', 'path', 'param', 'parameter', 'attribute', 'property', 'pointer'] as const;

/** `items[0].unit_price` from path segments; numbers (and digit strings) as indices. */
function joinPath(parts: readonly (string | number)[]): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'number' || /^\d+$/.test(part)) out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out;
}

/** The field an error object names: `field`, a JSON pointer (`/data/attributes/x`, `source.pointer`), or FastAPI's `loc`. */
function fieldOf(item: Record<string, unknown>): string | undefined {
  if (Array.isArray(item.loc)) {
    const parts = item.loc.filter((p): p is string | number => typeof p === 'string' || typeof p === 'number');
    // FastAPI names where the value came from first: the body's fields are what the operator knows.
    return joinPath(parts[0] === 'body' || parts[0] === 'query' ? parts.slice(1) : parts) || undefined;
  }
  const source = isObject(item.source) ? firstText(item.source, ['pointer', 'parameter']) : undefined;
  const named = firstText(item, FIELD_KEYS) ?? source;
  if (named === undefined) return undefined;
  return named.startsWith('/') ? joinPath(named.replace(/^\/(data\/attributes\/)?/, '').split('/')) : named;
}

/**
 * Field errors in any of the shapes services use, flattened to `{path: [messages]}`: a map of
 * fields to a message or a list (of texts, or of objects with a message), nested maps and lists
 * (`items[1].unit_price`), or a list of error objects that name their field.
 */
function collectFields(value: unknown, path: readonly (string | number)[], out: FieldErrors, depth = 0): void {
  if (Object.keys(out).length >= MAX_FIELDS || depth > MAX_DEPTH) return;
  const add = (where: readonly (string | number)[], message: string) => {
    const field = clip(joinPath(where) || '(body)');
    const list = (out[field] ??= []);
    if (list.length < 10) list.push(clip(message));
  };
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    add(path, String(value));
  } else if (Array.isArray(value)) {
    value.slice(0, MAX_FIELDS).forEach((item, i) => {
      if (isObject(item)) {
        const message = firstText(item, MESSAGE_KEYS);
        const field = fieldOf(item);
        if (message !== undefined) add(field === undefined ? path : [...path, field], message);
        else collectFields(item, [...path, i], out, depth + 1);
      } else if (Array.isArray(item)) {
        collectFields(item, [...path, i], out, depth + 1);
      } else if (item !== null && item !== undefined) {
        add(path, String(item));
      }
    });
  } else if (isObject(value)) {
    const message = path.length > 0 ? firstText(value, MESSAGE_KEYS) : undefined;
    if (message !== undefined) return add(path, message);
    for (const [key, child] of Object.entries(value).slice(0, MAX_FIELDS)) collectFields(child, [...path, key], out, depth + 1);
  }
}

const fieldsFrom = (value: unknown): FieldErrors | undefined => {
  if (value === undefined || value === null || typeof value === 'string') return undefined;
  const out: FieldErrors = {};
  collectFields(value, [], out);
  return Object.keys(out).length === 0 ? undefined : out;
};

/** A body that is nothing but a map of fields to lists of texts (Django REST framework's validation errors). */
const isFieldMap = (record: Record<string, unknown>): boolean =>
  Object.keys(record).length > 0 && Object.values(record).every((v) => Array.isArray(v) && v.length > 0 && v.every((m) => typeof m === 'string'));

/**
 * Field errors and a message from the bodies the services use — VAT `{error, details: {field:
 * [msg]}}`, registrations `{detail}` — and the shapes other stacks answer with (docs/decisions.md):
 * `errors` as a field map, a string or a list of `{field, message}`; `error` as an object; a list
 * of `{loc, msg}` under `detail`; a body that is only a field map; nested and indexed paths.
 */
export function extractErrorBody(body: unknown): { message?: string; fields?: FieldErrors } {
  if (!isObject(body)) return {};
  const nested = isObject(body.error) ? body.error : undefined;
  const raw =
    firstText(body, ['error', 'detail', 'message', 'title', 'error_description']) ??
    (nested === undefined ? undefined : firstText(nested, ['message', 'detail', 'title', 'error'])) ??
    (typeof body.errors === 'string' ? body.errors : undefined);
  const message = raw === undefined ? undefined : clip(raw);
  const fields =
    fieldsFrom(isObject(body.details) || Array.isArray(body.details) ? body.details : undefined) ??
    fieldsFrom(body.errors) ??
    fieldsFrom(nested?.details) ??
    fieldsFrom(nested?.errors) ??
    (Array.isArray(body.detail) ? fieldsFrom(body.detail) : undefined) ??
    (isFieldMap(body) ? fieldsFrom(body) : undefined);
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

/**
 * A 2xx answer that is not the service's at all: a page (HTML, XML) where the service answers JSON
 * — a WAF's blocking page (F5's default one answers 200), a proxy's or a captive portal's. It says
 * nothing about whether the request reached the service. An empty body is not one (a 201 or 204
 * without a body is the service's own, whatever its content-type).
 */
export function isForeignAnswer(res: HttpResponse): boolean {
  if (res.text.trim() === '') return false;
  if (/^\s*(text\/html|application\/xhtml\+xml)\b/i.test(res.headers['content-type'] ?? '')) return true;
  return /^\uFEFF?\s*</.test(res.text);
}

/** Turns a non-2xx response (or a foreign 2xx: isForeignAnswer) into a TaxsyncError with a stable code and a retry decision. */
export function errorFromResponse(res: HttpResponse, options: ClassifyOptions): TaxsyncError {
  const { message, fields } = extractErrorBody(res.body);
  const status = res.status;
  const retryAfterMs = parseRetryAfter(res.headers['retry-after'], options.now);
  const said = message === undefined ? '' : `: ${message}`;
  // A 5xx to a VAT submission (not idempotent) may come after the service stored it, Retry-After or not.
  const maybeStored = options.vatSubmission === true && status >= 500;
  const base = { status, http: res.exchange, ...(fields === undefined ? {} : { fields }), ...(maybeStored ? { ambiguous: true } : {}) };
  const where = `${options.endpoint} answered ${status}`;

  if (status >= 200 && status < 300) {
    // The request may or may not have reached the service: retried (a VAT submission: the same
    // bytes) until the service's own answer settles it.
    const type = res.headers['content-type'];
    return new TaxsyncError('API_FOREIGN_ANSWER', `${where} with a page that is not the service's answer${type === undefined ? '' : ` (${type})`}: something in between (a WAF, a proxy) answered`, {
      status,
      http: res.exchange,
      ambiguous: true,
    });
  }
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
