import { TaxsyncError } from '../domain/errors.js';
import type { NotSent } from '../mapping/index.js';
import type { HandlerOutcome } from './types.js';

/** What a mapper's "not sent" result means for the job: done, wait, or a dead letter. */
export function notSent(result: NotSent): HandlerOutcome {
  switch (result.kind) {
    case 'ignore':
      return { kind: 'done', detail: `nothing sent: ${result.reason}` };
    case 'wait':
      return { kind: 'wait', reason: result.reason };
    case 'invalid':
      throw new TaxsyncError('MAPPING_INVALID', result.message, { fields: result.fields });
  }
}

/** Runs a DELETE; a record already gone is a success (DESIGN.md, "not found"). */
export async function deleted(call: () => Promise<void>, what: string): Promise<HandlerOutcome> {
  try {
    await call();
    return { kind: 'done', detail: `${what} deleted` };
  } catch (error) {
    if (error instanceof TaxsyncError && error.code === 'API_NOT_FOUND') return { kind: 'done', detail: `${what} was already gone` };
    throw error;
  }
}

/** A read that answers undefined for 404. */
export async function found<T>(call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof TaxsyncError && error.code === 'API_NOT_FOUND') return undefined;
    throw error;
  }
}
