import { z } from 'zod';
import { TaxsyncError } from '../domain/errors.js';
import type { RedisClient } from './connection.js';
import type { Keys } from './keys.js';
import type { VatClaims } from './vat-claims.js';
import { BEGIN, OPERATOR, REOPEN, SETTLE, WITHDRAW } from './vat-ledger-scripts.js';

/**
 * The VAT submission ledger (DESIGN.md invariant 5; docs/vat.md, "The ledger"). POST
 * /api/vat/v1/transactions/ is not idempotent, so every submission has an entry per
 * (entity_jurisdiction, invoice_number), claimed by one record:
 *
 *   pending → in_flight → confirmed | rejected
 *                 ↘ unknown (sent, answer lost) → in_flight (the same body again) → …
 *                              ↘ unresolved (after TAXSYNC_VAT_UNKNOWN_LIMIT resends: an operator decides)
 *
 * - What was sent is immutable: once an attempt may have reached the service its body (the exact
 *   bytes) is the entry's for good; an unknown outcome is resolved by sending exactly those bytes
 *   again, whatever the invoice says now. Only a body never sent (pending) or refused (rejected)
 *   is replaced.
 * - `ambiguous` remembers that some attempt may have been accepted unheard: then a duplicate-number
 *   answer means "accepted" (confirmed); without it a duplicate is a real conflict.
 * - Every attempt holds a token and a lease: the answer is written only while the token is still
 *   the entry's (a worker that stalled past its lease and resumes is refused, counted, and sends
 *   nothing); an in_flight entry whose lease ran out counts as unknown.
 * - A claim is durable before it is answered `go` (with `claims`: written on their own connection
 *   and confirmed as TAXSYNC_ACK_DURABILITY asks, src/queue/vat-claims.ts): a claim lost with
 *   Redis's memory after its POST would make the next attempt's duplicate answer a "real
 *   conflict". One that cannot be confirmed is released unsent (REDIS_NOT_DURABLE, tried again).
 * - Open entries (in flight, unknown, pending) are indexed by when they next need attention, so a
 *   sweep finds those whose job is gone (src/vat-ops/resolver.ts).
 * - Each entry keeps its history of attempts (time, outcome, body hash) for `trace` and operators.
 */
export const LEDGER_STATES = ['pending', 'in_flight', 'unknown', 'unresolved', 'confirmed', 'rejected'] as const;
export type LedgerState = (typeof LEDGER_STATES)[number];

export const LedgerEntry = z.object({
  state: z.enum(LEDGER_STATES),
  ambiguous: z.boolean(),
  attempts: z.number().int(),
  /** Resends of an unknown outcome (counted against TAXSYNC_VAT_UNKNOWN_LIMIT). */
  resends: z.number().int(),
  entity_jurisdiction: z.string().optional(),
  invoice_number: z.string().optional(),
  /** The record that claimed the number (`recordKeyString`). */
  record: z.string().optional(),
  body_hash: z.string().optional(),
  /** The body (JSON, the exact bytes): what was, or will be, sent. */
  body: z.string().optional(),
  /** A supplementary submission: the invoice number of the part it adds to. */
  supplement_of: z.string().optional(),
  lease_until: z.number().optional(),
  transaction_id: z.string().optional(),
  warnings: z.boolean().optional(),
  /**
   * Confirmed, but the service said it will not report it as it is (`committed: false`, a
   * validity or compliance status `error`): what it said, for an operator (docs/operations.md).
   */
  attention: z.string().optional(),
  reporting_period: z.string().optional(),
  net: z.string().optional(),
  vat: z.string().optional(),
  currency: z.string().optional(),
  note: z.string().optional(),
  /** The error code of a rejection or an unresolved outcome (the entry's dead letter). */
  code: z.string().optional(),
  updated_at: z.string().optional(),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

/** One line of an entry's history. */
export const LedgerAttempt = z.object({
  at: z.string(),
  attempt: z.number().int(),
  /** sent, resent, confirmed, unknown, released, rejected, unresolved, reopened, fenced:<outcome>, operator:<action>. */
  outcome: z.string(),
  body_hash: z.string().optional(),
  note: z.string().optional(),
});
export type LedgerAttempt = z.infer<typeof LedgerAttempt>;

/** What begin() decided. */
export type BeginResult =
  | { go: true; token: string; body: string; resend: boolean; ambiguous: boolean; attempts: number; resends: number }
  | { go: false; state: 'confirmed' | 'rejected' | 'unresolved' | 'busy' | 'pending' | 'none'; entry: LedgerEntry | undefined }
  | { go: false; state: 'collision'; owner: string; entry: LedgerEntry | undefined };

export interface SubmissionFacts {
  record: string;
  body: string;
  bodyHash: string;
  reportingPeriod: string;
  net: string;
  vat: string;
  currency: string;
  supplementOf?: string;
}

/** The answer to one attempt (settle). */
export type Outcome =
  | { kind: 'confirmed'; transactionId?: string; warnings: boolean; note?: string; /** What the service said that keeps it from being reported as it is. */ attention?: string }
  /** It may have been processed: resolved later by resending the same body. */
  | { kind: 'unknown'; note: string }
  /** Certainly not processed (refused before it was sent, 429): pending again, or unknown after an ambiguous attempt. */
  | { kind: 'released'; note: string }
  /** Refused by the service, and nothing of it was accepted. */
  | { kind: 'rejected'; note: string; code: string }
  /** Not decidable without a person: the operator checks the filing (`taxsync vat ledger confirm|release`). */
  | { kind: 'unresolved'; note: string; code: string };

export interface VatLedger {
  /**
   * Claims the submission for one attempt: `submit` sends `facts.body` unless an earlier attempt
   * may have landed (then the stored body is resent: `resend`); `resolve` only resends an open
   * entry's stored body (facts are ignored). Or says why not. `go` only once the claim is durable
   * (with `claims`); a claim that cannot be confirmed is released unsent and REDIS_NOT_DURABLE thrown.
   */
  begin(entityJurisdiction: string, invoiceNumber: string, facts: SubmissionFacts, mode?: 'submit' | 'resolve'): Promise<BeginResult>;
  /** Writes the attempt's answer, only while `token` is still the entry's; false (counted) otherwise. */
  settle(entityJurisdiction: string, invoiceNumber: string, token: string, outcome: Outcome): Promise<boolean>;
  /** Whether the attempt still holds the entry (checked right before sending). */
  holds(entityJurisdiction: string, invoiceNumber: string, token: string): Promise<boolean>;
  /** Drops a claim never sent (pending) that `record` no longer needs. */
  withdraw(entityJurisdiction: string, invoiceNumber: string, record: string): Promise<boolean>;
  /** An operator replay of a rejected submission: back to pending. */
  reopen(entityJurisdiction: string, invoiceNumber: string): Promise<boolean>;
  /**
   * An operator's decision on an open or unresolved entry after checking the filing: `confirm`
   * (it is filed), `release` (it is not: the next attempt sends it, and a duplicate answer is then
   * a real conflict). Answers the state it left, or why it refused.
   */
  operator(entityJurisdiction: string, invoiceNumber: string, action: 'confirm' | 'release', actor: string): Promise<{ ok: true; from: LedgerState } | { ok: false; reason: string }>;
  get(entityJurisdiction: string, invoiceNumber: string): Promise<LedgerEntry | undefined>;
  history(entityJurisdiction: string, invoiceNumber: string): Promise<LedgerAttempt[]>;
  /** Every entry (for reconcile and status). */
  entries(): AsyncGenerator<[string, LedgerEntry]>;
  /** How many entries are in each state, and how many confirmed ones need attention (for status). */
  countByState(): Promise<Record<LedgerState, number> & { attention: number }>;
  /** The entries of one record (an invoice split by rate has several, supplements too). */
  forRecord(record: string): Promise<LedgerEntry[]>;
  /** Open entries (in flight, unknown, pending) due for attention at `now`: their keys, oldest first. */
  due(now: number, limit: number): Promise<string[]>;
  /** The entry under a key from due(). */
  byKey(key: string): Promise<LedgerEntry | undefined>;
  /** Looks at a due entry again at `at` (ms), while it stays open. */
  postpone(key: string, at: number): Promise<void>;
  /**
   * Notes how `refund` (a vat record) stands against `invoice`'s VAT: `open` before it reads that
   * VAT (and after deciding there was nothing to correct), `corrected` once it reported a correction,
   * `undone` once its cancellation reported the undo of that correction, `closed` when it was
   * cancelled before any correction was reported (nothing to undo, never decided again).
   */
  noteRefund(invoice: string, refund: string, standing: RefundStanding, stated?: StatedRefund): Promise<void>;
  /** What the refund's reported correction took back, and by which version (undefined: not kept). */
  statedRefund(invoice: string, refund: string): Promise<StatedRefund | undefined>;
  /** How `refund` stands against `invoice`'s VAT (undefined: never noted). */
  refundStanding(invoice: string, refund: string): Promise<RefundStanding | undefined>;
  /** The refunds of an invoice still `open`: to be decided again when the invoice's VAT is filed. */
  openRefundsOf(invoice: string): Promise<string[]>;
}

/** The ledger entries whose outcome is open, by state (`vat_ledger` of `taxsync status --json`). */
export interface VatLedgerStatus {
  /** Sent, answer lost: the next attempt resends the same body. */
  unknown: number;
  /** No settling answer after TAXSYNC_VAT_UNKNOWN_LIMIT resends: an operator decides. */
  unresolved: number;
  /** An attempt running now (or one whose worker stopped, until its lease runs out). */
  in_flight: number;
  /** Claimed, not sent yet. */
  pending: number;
  /** Confirmed, but the service said it will not report them as they are (committed: false, a status `error`): an operator fixes them there. */
  attention: number;
}

/** Every open state, unresolved included (the ones that need an operator). */
export async function vatLedgerStatus(ledger: Pick<VatLedger, 'countByState'>): Promise<VatLedgerStatus> {
  const counts = await ledger.countByState();
  return { unknown: counts.unknown, unresolved: counts.unresolved, in_flight: counts.in_flight, pending: counts.pending, attention: counts.attention };
}

export const REFUND_STANDINGS = ['open', 'corrected', 'undone', 'closed'] as const;
export type RefundStanding = (typeof REFUND_STANDINGS)[number];

const TakenBack = z.object({ amount: z.string(), tax_amount: z.string().optional() });
/**
 * A refund's reported correction: the version (event id) that reported it and the amounts it took
 * back (`from`: what an earlier version's correction took back and this one undid), so a later
 * version with the same amounts states nothing and one with other amounts states only the change.
 */
export const StatedRefund = TakenBack.extend({ event: z.string(), from: TakenBack.optional() });
export type StatedRefund = z.infer<typeof StatedRefund>;

const HISTORY_MAX = 100;

export interface VatLedgerOptions {
  leaseMs: number;
  clock?: () => Date;
  random?: () => string;
  /**
   * Tests only: ms added to Redis's clock, which decides leases (TIME in the scripts), so a test
   * moves lease time as it moves `clock`, without waiting. `clock` is the caller's: history times
   * and when the resolver looks at an open entry again, never whether a lease is live.
   */
  timeShift?: () => number;
  /**
   * Where claims are written and how they are confirmed durable before the POST (the workers:
   * TAXSYNC_ACK_DURABILITY). Without it a claim is in Redis's memory only when it is answered
   * (tools that never claim: trace, reconcile, the dead-letter and ledger commands).
   */
  claims?: VatClaims;
}

export function createVatLedger(redis: RedisClient, keys: Keys, options: VatLedgerOptions): VatLedger {
  const clock = options.clock ?? (() => new Date());
  const shift = () => Math.round(options.timeShift?.() ?? 0);
  const token = options.random ?? (() => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`);
  const key = (ej: string, invoice: string) => keys.vatLedger(ej, invoice);
  // Kept beside the entry under the same prefix (one slot on a cluster).
  const historyKey = (entryKey: string) => `${entryKey}:history`;
  const openKey = `${keys.prefix}:vat-open`;
  const refundsKey = (invoice: string) => `${keys.prefix}:vat-refunds-of:${invoice}`;
  // Beside the refund's standing in the same hash (record keys never start with "stated|").
  const statedField = (refund: string) => `stated|${refund}`;

  function parse(raw: Record<string, string>): LedgerEntry | undefined {
    if (!raw.state) return undefined;
    let fromBody: { entity_jurisdiction?: unknown; invoice_number?: unknown } = {};
    if (raw.invoice_number === undefined && raw.body !== undefined) {
      try {
        fromBody = JSON.parse(raw.body) as typeof fromBody;
      } catch {
        // an entry written before the ledger kept its key fields, with an unreadable body
      }
    }
    const { token: _token, ...rest } = raw;
    const parsed = LedgerEntry.safeParse({
      ...rest,
      ...(typeof fromBody.entity_jurisdiction === 'string' ? { entity_jurisdiction: fromBody.entity_jurisdiction } : {}),
      ...(typeof fromBody.invoice_number === 'string' ? { invoice_number: fromBody.invoice_number } : {}),
      ambiguous: raw.ambiguous === '1',
      attempts: Number(raw.attempts ?? 0),
      resends: Number(raw.resends ?? 0),
      lease_until: raw.lease_until === undefined ? undefined : Number(raw.lease_until),
      warnings: raw.warnings === undefined ? undefined : raw.warnings === '1',
    });
    return parsed.success ? parsed.data : undefined;
  }
  const read = async (entryKey: string) => parse(await redis.hgetall(entryKey));

  async function settle(ej: string, invoice: string, attemptToken: string, outcome: Outcome, unsentResend = false): Promise<boolean> {
    const now = clock();
    const entryKey = key(ej, invoice);
    const written = await redis.eval(
      SETTLE,
      4,
      entryKey,
      historyKey(entryKey),
      openKey,
      keys.counters,
      attemptToken,
      outcome.kind,
      now.toISOString(),
      // An unknown is looked at again by the resolver's sweep if its job has not settled it by then.
      now.getTime() + options.leaseMs,
      outcome.note ?? '',
      outcome.kind === 'confirmed' ? (outcome.transactionId ?? '') : '',
      outcome.kind === 'confirmed' && outcome.warnings ? '1' : '0',
      HISTORY_MAX,
      outcome.kind === 'rejected' || outcome.kind === 'unresolved' ? outcome.code : '',
      unsentResend ? '1' : '0',
      outcome.kind === 'confirmed' ? (outcome.attention ?? '') : '',
    );
    return Number(written) === 1;
  }

  /**
   * Waits until the claim is durable; otherwise releases it unsent (the entry open again as it was:
   * pending, or unknown after an ambiguous attempt, its resend not counted) and throws
   * REDIS_NOT_DURABLE, retryable: the POST must not go out on a claim Redis may lose.
   */
  async function confirmClaim(claims: VatClaims, mark: number, ej: string, invoice: string, attemptToken: string, resend: boolean): Promise<void> {
    try {
      await claims.confirm(mark);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      // Best effort: when Redis refuses the release too (a full disk), the claim runs out its lease
      // and is resent as a possibly landed attempt — the same bytes, so nothing is doubled.
      await settle(ej, invoice, attemptToken, { kind: 'released', note: `not sent: the claim could not be confirmed durable (${why})` }, resend).catch(() => undefined);
      throw new TaxsyncError('REDIS_NOT_DURABLE', `VAT ${invoice} not sent: its ledger claim could not be confirmed durable before the submission (${why}); tried again later`, {
        retryable: true,
        cause: error,
      });
    }
  }

  async function* entries(): AsyncGenerator<[string, LedgerEntry]> {
    let cursor = '0';
    do {
      const [next, members] = await redis.sscan(keys.vatLedgerIndex, cursor, 'COUNT', 200);
      cursor = next;
      for (const member of members) {
        const entry = await read(member);
        if (entry) yield [member, entry];
      }
    } while (cursor !== '0');
  }

  return {
    async begin(ej, invoice, facts, mode = 'submit') {
      const now = clock();
      const entryKey = key(ej, invoice);
      const attemptToken = token();
      const mark = options.claims?.mark() ?? 0;
      const result = (await (options.claims?.connection ?? redis).eval(
        BEGIN,
        5,
        entryKey,
        keys.vatLedgerIndex,
        keys.vatLedgerOfRecord(facts.record),
        historyKey(entryKey),
        openKey,
        now.getTime(),
        options.leaseMs,
        facts.record,
        facts.bodyHash,
        facts.reportingPeriod,
        facts.net,
        facts.vat,
        facts.currency,
        now.toISOString(),
        facts.body,
        attemptToken,
        ej,
        invoice,
        facts.supplementOf ?? '',
        mode,
        HISTORY_MAX,
        shift(),
      )) as string[];
      if (result[0] === 'go') {
        if (options.claims !== undefined) await confirmClaim(options.claims, mark, ej, invoice, attemptToken, result[4] === '1');
        return {
          go: true,
          token: attemptToken,
          ambiguous: result[1] === '1',
          attempts: Number(result[2]),
          resends: Number(result[3]),
          resend: result[4] === '1',
          body: result[5] as string,
        };
      }
      const entry = await read(entryKey);
      if (result[0] === 'collision') return { go: false, state: 'collision', owner: result[1] as string, entry };
      return { go: false, state: result[0] as 'confirmed', entry };
    },
    settle: (ej, invoice, attemptToken, outcome) => settle(ej, invoice, attemptToken, outcome),
    async holds(ej, invoice, attemptToken) {
      const [state, held] = await redis.hmget(key(ej, invoice), 'state', 'token');
      return state === 'in_flight' && held === attemptToken;
    },
    async withdraw(ej, invoice, record) {
      const entryKey = key(ej, invoice);
      const done = await redis.eval(WITHDRAW, 5, entryKey, keys.vatLedgerIndex, keys.vatLedgerOfRecord(record), historyKey(entryKey), openKey, record);
      return Number(done) === 1;
    },
    async reopen(ej, invoice) {
      const now = clock();
      const entryKey = key(ej, invoice);
      return Number(await redis.eval(REOPEN, 3, entryKey, historyKey(entryKey), openKey, now.toISOString(), now.getTime(), HISTORY_MAX)) === 1;
    },
    async operator(ej, invoice, action, actor) {
      const now = clock();
      const entryKey = key(ej, invoice);
      const result = (await redis.eval(OPERATOR, 3, entryKey, historyKey(entryKey), openKey, action, actor, now.toISOString(), now.getTime(), HISTORY_MAX, shift())) as string[];
      if (result[0] === 'ok') return { ok: true, from: result[1] as LedgerState };
      return { ok: false, reason: result[1] as string };
    },
    get: (ej, invoice) => read(key(ej, invoice)),
    async history(ej, invoice) {
      const lines = await redis.lrange(historyKey(key(ej, invoice)), 0, -1);
      return lines.flatMap((line) => {
        try {
          const parsed = LedgerAttempt.safeParse(JSON.parse(line));
          return parsed.success ? [parsed.data] : [];
        } catch {
          return [];
        }
      });
    },
    async forRecord(record) {
      const members = (await redis.smembers(keys.vatLedgerOfRecord(record))).sort();
      const entries = await Promise.all(members.map(read));
      return entries.filter((e): e is LedgerEntry => e !== undefined);
    },
    entries,
    async countByState() {
      const counts = Object.fromEntries(LEDGER_STATES.map((state) => [state, 0])) as Record<LedgerState, number>;
      let attention = 0;
      for await (const [, entry] of entries()) {
        counts[entry.state] += 1;
        if (entry.state === 'confirmed' && entry.attention !== undefined) attention += 1;
      }
      return { ...counts, attention };
    },
    due: (now, limit) => redis.zrangebyscore(openKey, '-inf', now, 'LIMIT', 0, limit),
    byKey: read,
    async postpone(entryKey, at) {
      await redis.zadd(openKey, 'XX', at, entryKey);
    },
    async noteRefund(invoice, refund, standing, stated) {
      // One HSET: the standing and what it stated never disagree after a crash.
      if (stated === undefined) await redis.hset(refundsKey(invoice), refund, standing);
      else await redis.hset(refundsKey(invoice), refund, standing, statedField(refund), JSON.stringify(stated));
    },
    async statedRefund(invoice, refund) {
      const raw = await redis.hget(refundsKey(invoice), statedField(refund));
      if (raw === null) return undefined;
      try {
        const parsed = StatedRefund.safeParse(JSON.parse(raw));
        return parsed.success ? parsed.data : undefined;
      } catch {
        return undefined;
      }
    },
    async refundStanding(invoice, refund) {
      const standing = await redis.hget(refundsKey(invoice), refund);
      return (REFUND_STANDINGS as readonly string[]).includes(standing ?? '') ? (standing as RefundStanding) : undefined;
    },
    async openRefundsOf(invoice) {
      const all = await redis.hgetall(refundsKey(invoice));
      return Object.entries(all)
        .filter(([, standing]) => standing === 'open')
        .map(([refund]) => refund);
    },
  };
}
