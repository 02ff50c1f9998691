import { acceptedUnreadable } from '../api/index.js';
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

/** What a write answered: its record, or (accepted, unreadable answer) the id learned some other way. */
export type Accepted<T> = { kind: 'read'; record: T } | { kind: 'unreadable'; status: number; id: string | undefined; why: string };

/**
 * Runs a write. A 2xx whose answer lacks a readable id is still a write done: it is never sent
 * again blindly (DESIGN.md invariant 2 keeps it applied); the id is learned with `learn` (the
 * record read back by its key, an exemption found by its body) or stays unknown.
 */
export async function accepted<T>(write: () => Promise<T>, learn?: () => Promise<string | undefined>): Promise<Accepted<T>> {
  try {
    return { kind: 'read', record: await write() };
  } catch (error) {
    if (!acceptedUnreadable(error)) throw error;
    let id: string | undefined;
    let why = error.message;
    if (learn !== undefined) {
      try {
        id = await learn();
        if (id === undefined) why += '; it was not found afterwards either';
      } catch (failure) {
        why += `; learning its id failed too: ${failure instanceof Error ? failure.message : String(failure)}`;
      }
    }
    return { kind: 'unreadable', status: error.status ?? 200, id, why };
  }
}

/** The outcome of a write accepted with an answer taxsync could not read its id from. */
export function acceptedOutcome(what: string, answer: Extract<Accepted<unknown>, { kind: 'unreadable' }>, how: string): Extract<HandlerOutcome, { kind: 'done' }> {
  return answer.id !== undefined
    ? { kind: 'done', status: answer.status, taxId: answer.id, detail: `${what} ${answer.id} accepted (${answer.status}); its answer had no readable id, ${how}` }
    : { kind: 'done', status: answer.status, idUnknown: true, detail: `${what} accepted (${answer.status}), tax engine id unknown: ${answer.why}` };
}
