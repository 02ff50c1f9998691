import type { RedisClient } from './connection.js';
import { z } from 'zod';
import type { Keys } from './keys.js';

/**
 * The VAT submission ledger (DESIGN.md invariant 5). POST /api/vat/v1/transactions/ is not
 * idempotent, so every submission is recorded per (entity_jurisdiction, invoice_number):
 *
 *   pending → in_flight → confirmed | rejected
 *                 ↘ unknown (sent, answer lost) → in_flight again → confirmed | rejected
 *
 * `ambiguous` remembers that some attempt may have been accepted without us hearing it: then a
 * VAT_DUPLICATE answer means "already accepted" (confirmed), while without it a duplicate is a real
 * conflict. An in_flight entry whose lease ran out (a crashed or stalled worker) counts as unknown.
 */
export const LEDGER_STATES = ['pending', 'in_flight', 'unknown', 'confirmed', 'rejected'] as const;
export type LedgerState = (typeof LEDGER_STATES)[number];

export const LedgerEntry = z.object({
  state: z.enum(LEDGER_STATES),
  ambiguous: z.boolean(),
  attempts: z.number().int(),
  record: z.string().optional(),
  body_hash: z.string().optional(),
  /** The body last sent (JSON): what an accepted submission said, compared when the invoice changes. */
  body: z.string().optional(),
  transaction_id: z.string().optional(),
  warnings: z.boolean().optional(),
  reporting_period: z.string().optional(),
  net: z.string().optional(),
  vat: z.string().optional(),
  currency: z.string().optional(),
  note: z.string().optional(),
  updated_at: z.string().optional(),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

/** What begin() decided. */
export type BeginResult =
  | { go: true; ambiguous: boolean; attempts: number }
  | { go: false; state: 'confirmed' | 'rejected' | 'busy'; entry: LedgerEntry };

// KEYS[1] entry hash, KEYS[2] index set, KEYS[3] the record's own set.
// ARGV: now ms, lease ms, record, body hash, period, net, vat, currency, iso now, body.
const BEGIN = `
local e = redis.call('HMGET', KEYS[1], 'state', 'lease_until', 'ambiguous', 'attempts')
local state = e[1]
local ambiguous = e[3] == '1'
if state == 'confirmed' or state == 'rejected' then return {state} end
if state == 'in_flight' then
  if tonumber(e[2] or '0') > tonumber(ARGV[1]) then return {'busy'} end
  ambiguous = true
end
if state == 'unknown' then ambiguous = true end
local attempts = tonumber(e[4] or '0') + 1
redis.call('HSET', KEYS[1], 'state', 'in_flight', 'lease_until', tonumber(ARGV[1]) + tonumber(ARGV[2]),
  'ambiguous', ambiguous and '1' or '0', 'attempts', attempts, 'record', ARGV[3], 'body_hash', ARGV[4],
  'reporting_period', ARGV[5], 'net', ARGV[6], 'vat', ARGV[7], 'currency', ARGV[8], 'updated_at', ARGV[9], 'body', ARGV[10])
redis.call('SADD', KEYS[2], KEYS[1])
redis.call('SADD', KEYS[3], KEYS[1])
return {'go', ambiguous and '1' or '0', tostring(attempts)}
`;

export interface SubmissionFacts {
  record: string;
  body: string;
  bodyHash: string;
  reportingPeriod: string;
  net: string;
  vat: string;
  currency: string;
}

export interface VatLedger {
  /** Claims the submission for one attempt, or says why not (already done, or another attempt is in flight). */
  begin(entityJurisdiction: string, invoiceNumber: string, facts: SubmissionFacts): Promise<BeginResult>;
  confirm(entityJurisdiction: string, invoiceNumber: string, outcome: { transactionId?: string; warnings: boolean; note?: string }): Promise<void>;
  /** The request may have reached the service and no answer came: retry, and a duplicate then means accepted. */
  markUnknown(entityJurisdiction: string, invoiceNumber: string, note: string): Promise<void>;
  /** Certainly not accepted (refused before it was sent, or answered without processing): back to pending. */
  release(entityJurisdiction: string, invoiceNumber: string, note: string): Promise<void>;
  reject(entityJurisdiction: string, invoiceNumber: string, note: string): Promise<void>;
  /** An operator replay of a rejected submission: back to pending, keeping `ambiguous`. */
  reopen(entityJurisdiction: string, invoiceNumber: string): Promise<boolean>;
  get(entityJurisdiction: string, invoiceNumber: string): Promise<LedgerEntry | undefined>;
  /** Every entry (for reconcile and status). */
  entries(): AsyncGenerator<[string, LedgerEntry]>;
  /** The entries of one record (an invoice split by rate has several). */
  forRecord(record: string): Promise<LedgerEntry[]>;
}

export function createVatLedger(redis: RedisClient, keys: Keys, options: { leaseMs: number; clock?: () => Date }): VatLedger {
  const clock = options.clock ?? (() => new Date());
  const key = (ej: string, invoice: string) => keys.vatLedger(ej, invoice);

  async function set(ej: string, invoice: string, fields: Record<string, string>): Promise<void> {
    await redis.hset(key(ej, invoice), { ...fields, updated_at: clock().toISOString() });
  }

  function parse(raw: Record<string, string>): LedgerEntry | undefined {
    if (!raw.state) return undefined;
    const parsed = LedgerEntry.safeParse({
      ...raw,
      ambiguous: raw.ambiguous === '1',
      attempts: Number(raw.attempts ?? 0),
      warnings: raw.warnings === undefined ? undefined : raw.warnings === '1',
    });
    return parsed.success ? parsed.data : undefined;
  }

  return {
    async begin(ej, invoice, facts) {
      const now = clock();
      const result = (await redis.eval(
        BEGIN,
        3,
        key(ej, invoice),
        keys.vatLedgerIndex,
        keys.vatLedgerOfRecord(facts.record),
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
      )) as string[];
      if (result[0] === 'go') return { go: true, ambiguous: result[1] === '1', attempts: Number(result[2]) };
      const entry = parse(await redis.hgetall(key(ej, invoice)))!;
      return { go: false, state: result[0] as 'confirmed' | 'rejected' | 'busy', entry };
    },
    async confirm(ej, invoice, outcome) {
      await set(ej, invoice, {
        state: 'confirmed',
        warnings: outcome.warnings ? '1' : '0',
        ...(outcome.transactionId ? { transaction_id: outcome.transactionId } : {}),
        ...(outcome.note ? { note: outcome.note } : {}),
      });
    },
    markUnknown: (ej, invoice, note) => set(ej, invoice, { state: 'unknown', ambiguous: '1', note }),
    release: (ej, invoice, note) => set(ej, invoice, { state: 'pending', note }),
    reject: (ej, invoice, note) => set(ej, invoice, { state: 'rejected', note }),
    async reopen(ej, invoice) {
      const entry = parse(await redis.hgetall(key(ej, invoice)));
      if (entry?.state !== 'rejected') return false;
      await set(ej, invoice, { state: 'pending', note: 'reopened for a replay' });
      return true;
    },
    async get(ej, invoice) {
      return parse(await redis.hgetall(key(ej, invoice)));
    },
    async forRecord(record) {
      const members = await redis.smembers(keys.vatLedgerOfRecord(record));
      const entries = await Promise.all(members.map(async (member) => parse(await redis.hgetall(member))));
      return entries.filter((e): e is LedgerEntry => e !== undefined);
    },
    async *entries() {
      let cursor = '0';
      do {
        const [next, members] = await redis.sscan(keys.vatLedgerIndex, cursor, 'COUNT', 200);
        cursor = next;
        for (const member of members) {
          const entry = parse(await redis.hgetall(member));
          if (entry) yield [member, entry];
        }
      } while (cursor !== '0');
    },
  };
}
