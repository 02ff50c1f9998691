import type { z } from 'zod';
import { TaxsyncError, isTaxsyncError } from '../domain/errors.js';
import { issuesToFields, summariseFields } from '../domain/field-errors.js';
import { detectDrift, type DriftObserver } from './drift.js';
import type { HttpResponse } from './http.js';

/** How to read one answer: what taxsync needs from it, and the contract to compare the rest with. */
export interface AnswerSchemas<S extends z.ZodType> {
  /** The fields taxsync reads (src/api/schemas/*-answers.ts); only these can make an answer unreadable. */
  answer: S;
  /** The answer as documented; differences are reported as drift, never refused. */
  contract?: z.ZodType;
}

/**
 * Reads a 2xx answer: reports how it differs from the contract (drift, never an error), then reads
 * the fields taxsync needs. An essential field missing or unreadable is API_BAD_RESPONSE naming
 * it, with the 2xx status: for a write that means the service accepted it (never resend blindly).
 */
export function readAnswer<S extends z.ZodType>(
  schemas: AnswerSchemas<S>,
  res: HttpResponse,
  options: { endpoint: string; /** A request that changes state: its 2xx means it was applied. */ write?: boolean; onDrift?: DriftObserver | undefined },
): z.infer<S> {
  if (schemas.contract !== undefined && options.onDrift !== undefined) reportDrift(schemas.contract, res, options.endpoint, options.onDrift);
  const result = schemas.answer.safeParse(res.body);
  if (result.success) return result.data;
  const fields = issuesToFields(result.error.issues);
  const body =
    res.tooLarge !== undefined
      ? `a body larger than ${res.tooLarge} bytes (not read)`
      : res.body === undefined
        ? res.text.trim() === ''
          ? 'an empty body'
          : 'a body that is not JSON'
        : 'a body taxsync cannot use';
  const write = options.write === true;
  throw new TaxsyncError(
    'API_BAD_RESPONSE',
    `${options.endpoint} answered ${res.status} with ${body}: ${summariseFields(fields)}${write ? ' (the service accepted the request: do not send it again blindly)' : ''}`,
    { status: res.status, fields, http: res.exchange },
  );
}

function reportDrift(contract: z.ZodType, res: HttpResponse, endpoint: string, onDrift: DriftObserver): void {
  if (res.body === undefined) {
    onDrift({ endpoint, path: '(body)', kind: res.text.trim() === '' ? 'missing' : 'wrong_type' });
    return;
  }
  for (const drift of detectDrift(contract, res.body)) onDrift({ endpoint, ...drift });
}

/**
 * A write the service accepted (2xx) whose answer lacks what taxsync reads from it (its id):
 * the write is done and must not be sent again; what is missing is learned another way.
 */
export function acceptedUnreadable(error: unknown): error is TaxsyncError {
  return (
    isTaxsyncError(error) && !error.notSent && error.code === 'API_BAD_RESPONSE' && error.status !== undefined && error.status >= 200 && error.status < 300
  );
}
