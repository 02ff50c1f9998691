import { createHash } from 'node:crypto';
import type { VatClient, VatSubmission, VatTransactionRequest } from '../api/index.js';
import { TaxsyncError, isTaxsyncError } from '../domain/errors.js';
import type { Metrics, VatSubmissionOutcome } from '../observability/metrics.js';
import type { BeginResult, LedgerEntry, Outcome, VatLedger } from '../queue/vat-ledger.js';

/**
 * One attempt of one VAT submission through the ledger (docs/vat.md, "The ledger"): claim, send
 * the claimed bytes, write the answer. Every answer the service can give ends in a ledger state;
 * what the job does next is the error thrown (retry, dead letter) or the detail returned.
 */

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export interface AttemptDeps {
  vat: VatClient;
  ledger: VatLedger;
  /** Resends of an unknown outcome before it is VAT_OUTCOME_UNRESOLVED. */
  unknownLimit: number;
  metrics?: Pick<Metrics, 'vatSubmissions'> | undefined;
  /** Trace line of an accepted-with-warnings answer. */
  onWarnings?: (number: string) => Promise<void>;
  /** An accepted submission the service will not report as it is: trace line and warn log. */
  onAttention?: (number: string, problems: string[], transactionId: string | undefined) => Promise<void>;
}

/**
 * What in an accepted submission's answer keeps the service from reporting it as it is: not
 * committed to reporting, or a validity or compliance status `error` (vat-compliance-api.md, "VAT
 * transaction (response)"). Fields absent or unreadable say nothing.
 */
export function reportingProblems(transaction: Pick<VatSubmission['transaction'], 'committed' | 'validity_status' | 'compliance_status'>): string[] {
  return [
    ...(transaction.committed === false ? ['committed: false'] : []),
    ...(transaction.validity_status === 'error' ? ['validity_status: error'] : []),
    ...(transaction.compliance_status === 'error' ? ['compliance_status: error'] : []),
  ];
}

export type Claimed = Extract<BeginResult, { go: true }>;

/** How to resolve an unknown by hand: check the filing, then confirm or release, then replay. */
export function unresolvedHelp(ej: string, number: string): string {
  const quoted = `'${number.replace(/'/g, "'\\''")}'`;
  return (
    `check whether the filing holds it (\`taxsync vat reconcile --period <its period> --filing <id>\`, \`taxsync vat filings boxes <id>\`), ` +
    `then \`taxsync vat ledger confirm ${ej} ${quoted}\` if it does or \`taxsync vat ledger release ${ej} ${quoted}\` if it does not, ` +
    'and replay this entry (`taxsync dlq replay <id>`)'
  );
}

export function unresolvedError(entry: Pick<LedgerEntry, 'entity_jurisdiction' | 'invoice_number' | 'body_hash' | 'resends' | 'note'>, cause?: string): TaxsyncError {
  const ej = entry.entity_jurisdiction ?? '?';
  const number = entry.invoice_number ?? '?';
  return new TaxsyncError(
    'VAT_OUTCOME_UNRESOLVED',
    `VAT submission ${number} (entity jurisdiction ${ej}, body sha256 ${entry.body_hash ?? '?'}) may or may not have been accepted: ` +
      `${entry.resends} resend(s) of the same body got no answer that settles it (${cause ?? entry.note ?? 'no answer'}). ` +
      `taxsync will not send it again on its own: ${unresolvedHelp(ej, number)}`,
    { fields: { invoice_number: [`${number}: outcome unknown (entity jurisdiction ${ej}, body sha256 ${entry.body_hash ?? '?'})`] } },
  );
}

/** The attempt lost its claim to a successor (a stall past its lease): it stops, sends and writes nothing. */
const fencedError = (number: string) =>
  new TaxsyncError('RECORD_BUSY', `VAT ${number}: this attempt's lease ran out and another attempt took the submission over; it stops here`);

/**
 * Sends the claimed body and writes the answer. Returns a line for the trace when the
 * submission is settled as accepted; throws otherwise (the thrown error's code decides: retry
 * for an unknown or released outcome, dead letter for a rejection or an unresolved one).
 */
export async function sendClaimed(deps: AttemptDeps, ej: string, number: string, claim: Claimed): Promise<string> {
  const count = (outcome: VatSubmissionOutcome) => deps.metrics?.vatSubmissions.inc({ outcome });
  const settle = async (outcome: Outcome): Promise<void> => {
    if (!(await deps.ledger.settle(ej, number, claim.token, outcome))) {
      count('fenced');
      throw fencedError(number);
    }
  };
  // Last check before the bytes leave: a successor that took over after a stall owns the entry.
  if (!(await deps.ledger.holds(ej, number, claim.token))) {
    count('fenced');
    throw fencedError(number);
  }
  const body = JSON.parse(claim.body) as VatTransactionRequest;
  let answer: VatSubmission;
  try {
    answer = await deps.vat.submitTransaction(body);
  } catch (thrown) {
    const error = isTaxsyncError(thrown)
      ? thrown
      : new TaxsyncError('INTERNAL_ERROR', `unexpected error while submitting: ${(thrown as Error)?.message ?? String(thrown)}`, { cause: thrown, ambiguous: true });
    return settleFailure(deps, ej, number, claim, error, settle, count);
  }
  // Stored: never sent again, whatever the answer says about reporting it (a resend is a duplicate).
  const problems = reportingProblems(answer.transaction);
  const attention = problems.length > 0 ? problems.join('; ') : undefined;
  await settle({ kind: 'confirmed', transactionId: answer.transaction.id, warnings: answer.withWarnings, ...(attention === undefined ? {} : { attention }) });
  count(attention !== undefined ? 'accepted_with_errors' : answer.withWarnings ? 'accepted_with_warnings' : 'accepted');
  // After the settle: a failure writing the trace line must not turn a confirmed entry back.
  if (attention !== undefined) await deps.onAttention?.(number, problems, answer.transaction.id);
  else if (answer.withWarnings) await deps.onWarnings?.(number);
  const said = attention === undefined ? '' : `, but the service will not report it as it is (${attention})`;
  return `${number} accepted (${answer.status}${answer.withWarnings ? ', with warnings' : ''})${said}${claim.resend ? ' on a resend of the same body' : ''}`;
}

/**
 * Whether a refusal shows the service evaluated the body: a 400 or 422 with field errors (the
 * service reports every rule the body breaks, rule 7 included; docs/decisions.md). Only such a
 * refusal of the same bytes proves an earlier attempt of them was not accepted.
 */
const evaluatedTheBody = (error: TaxsyncError): boolean =>
  (error.status === 400 || error.status === 422) && error.fields !== undefined && Object.keys(error.fields).length > 0;

async function settleFailure(
  deps: AttemptDeps,
  ej: string,
  number: string,
  claim: Claimed,
  error: TaxsyncError,
  settle: (outcome: Outcome) => Promise<void>,
  count: (outcome: VatSubmissionOutcome) => void,
): Promise<string> {
  if (error.notSent) {
    // The request never left (no token, a refused connection, a body its schema refuses): this
    // attempt changed nothing at the service, whatever the status or ambiguity of what failed
    // first. The entry is open again (unknown when an earlier attempt was ambiguous).
    await settle({ kind: 'released', note: error.message });
    count('released');
    throw error;
  }
  if (error.code === 'VAT_DUPLICATE') {
    if (claim.ambiguous) {
      await settle({ kind: 'confirmed', warnings: false, note: 'accepted by an earlier attempt whose answer was lost (duplicate answer to the same body)' });
      count('confirmed_by_duplicate');
      return `${number} was already accepted by an earlier attempt (duplicate answer to the same body)`;
    }
    await settle({ kind: 'rejected', note: error.message, code: error.code });
    count('rejected');
    throw error;
  }
  if (error.notSent) {
    // Never left taxsync (no token could be had): certainly not processed, whatever the token
    // endpoint answered. The entry is open again; the error's own retry decision stands.
    await settle({ kind: 'released', note: error.message });
    count('released');
    throw error;
  }
  if (!error.ambiguous && error.status !== undefined && error.status >= 200 && error.status < 300) {
    // Accepted, but the answer did not match the contract: never send it again. (A page that is
    // not the service's answer, API_FOREIGN_ANSWER, is ambiguous: the outcome stays unknown below.)
    await settle({ kind: 'confirmed', warnings: false, note: `accepted; unreadable answer: ${error.message}` });
    count('accepted');
    return `${number} accepted (answer unreadable)`;
  }
  // It may have been processed. Resent (the same bytes) until an answer settles it, up to the limit.
  const stillUnknown = async (note: string): Promise<never> => {
    if (claim.resends >= deps.unknownLimit) {
      const why = `no settling answer after ${claim.resends} resend(s): ${note}`;
      await settle({ kind: 'unresolved', note: why, code: 'VAT_OUTCOME_UNRESOLVED' });
      count('unresolved');
      throw unresolvedError({ entity_jurisdiction: ej, invoice_number: number, body_hash: sha256(claim.body), resends: claim.resends }, note);
    }
    await settle({ kind: 'unknown', note });
    count('unknown');
    throw error;
  };
  if (error.ambiguous || error.code === 'API_SERVER_ERROR' || error.code === 'API_TIMEOUT') return stillUnknown(error.message);
  if (error.retryable || error.code === 'API_UNAUTHORIZED' || error.code === 'API_FORBIDDEN' || error.code === 'API_AUTH_FAILED') {
    // Certainly not processed (429, connection refused, refused credentials): the entry is open again.
    await settle({ kind: 'released', note: error.message });
    count('released');
    throw error;
  }
  if (claim.ambiguous && !evaluatedTheBody(error)) {
    // The same bytes may have landed before, and this refusal does not say the service looked at
    // them (a 404, a redirect, a 409, a 4xx without field errors): it proves nothing about that
    // attempt. The outcome stays unknown (the resolver brings the entry back; a replay resends).
    return stillUnknown(`refused after an attempt whose answer was lost, without evaluating the body: ${error.message}`);
  }
  if (claim.ambiguous && error.fields !== undefined && Object.hasOwn(error.fields, 'invoice_number')) {
    // The same bytes may have landed before, and the refusal names the number among other fields:
    // it may be a duplicate behind other findings. Only a person can tell.
    const note = `refused with field errors that include invoice_number after an attempt whose answer was lost: ${error.message}`;
    await settle({ kind: 'unresolved', note, code: 'VAT_OUTCOME_UNRESOLVED' });
    count('unresolved');
    throw unresolvedError({ entity_jurisdiction: ej, invoice_number: number, body_hash: sha256(claim.body), resends: claim.resends }, note);
  }
  await settle({ kind: 'rejected', note: error.message, code: error.code });
  count('rejected');
  throw error;
}
