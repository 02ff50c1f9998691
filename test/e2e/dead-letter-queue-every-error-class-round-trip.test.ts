import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseSettings } from '../../src/config/settings.js';
import type { ErrorCode } from '../../src/domain/errors.js';
import type { FaultRuleInput } from '../../src/emulator/faults.js';
import type { AuditEntry } from '../../src/queue/audit.js';
import { createDeadLetterStore, type DeadLetterEntry, type DeadLetterStore } from '../../src/queue/dead-letter.js';
import { createKeys } from '../../src/queue/keys.js';
import { readTrace } from '../../src/queue/trace.js';
import { buildCli, spawnCli } from '../helpers/cli.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { erpCustomer, erpExemption, erpInvoice, erpRefund } from '../helpers/erp-events.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';
import { ENTITY, vatBody } from '../unit/emulator/helpers.js';

/**
 * Issue 7's "done when": the real pipeline (signed webhooks → Redis → workers → the built-in
 * emulator) fills the dead-letter queue with an entry of every error class that can end there,
 * and an operator then works through it with the `taxsync` CLI as built: list, filter, stats,
 * show, replay after the fault is cleared (twice: nothing doubles), --remap, edit + replay,
 * discard, export, and finally the audit log.
 *
 * Codes that cannot reach the dead-letter queue, by design:
 * - CONFIG_INVALID, API_INSECURE_URL, LISTEN_FAILED: checked at start; taxsync does not run, so
 *   nothing is queued.
 * - API_RATE_LIMITED: the queue pauses and the job goes back without using an attempt; never final.
 * - RECORD_BUSY: a refund whose invoice is locked by another refund tries again shortly without
 *   using an attempt; the lock expires by itself (also one left by a crashed worker), so it is
 *   never final. The scenario shows such a refund delivered once the lock expires.
 * - REDIS_UNAVAILABLE: the dead-letter queue lives in Redis; webhooks answer 503 and workers
 *   reconnect, so nothing fails for good.
 * - REQUEST_INVALID: the mapping checks each body against the contract itself and reports
 *   MAPPING_INVALID; REQUEST_INVALID is the client's last guard against a mapping bug.
 * - API_BAD_RESPONSE: needs a service whose 2xx answer to a read lacks the record's id; the
 *   emulator always gives it (the client's own tests cover the code: test/unit/api).
 */

const WORKER = { id: 'ops-worker', secret: 'ops-worker-secret' };
const ACTOR = 'ops-ann';
const DE = { street: 'Unter den Linden 1', city: 'Berlin', zip: '10115', country: 'DE' };

/** A paid German B2B invoice, which is also a VAT submission. */
function germanInvoice(number: string, taxNumber: string) {
  return erpInvoice(number, 1, [], {
    status: 'paid',
    currency: 'EUR',
    customer: { external_id: `cust-${number}`, name: 'Acme GmbH', tax_number: taxNumber },
    addresses: { billing: DE, shipping: DE },
    lines: [{ id: '1', name: 'widget', unit_price: '100.00', quantity: '1', tax_rate: '0.19' }],
  });
}

const LINE = { unit_price: '100.00', quantity: '1' };

describe('the dead-letter queue: every error class, reviewed and worked off with the CLI', () => {
  const ctx = useRedis();
  let main: string;
  let daemon: Daemon;
  let dir: string;
  let settingsPath: string;
  let deadLetters: DeadLetterStore;

  beforeAll(async () => {
    main = await buildCli();
  }, 180_000);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'taxsync-dlq-'));
    // A German seller whose paid invoices are VAT submissions too; the other invoices of the
    // scenario are merely active, so they (and their refunds) stay out of the VAT service.
    const settingsJson = {
      vat: { seller_country: 'DE', registrations: [{ taxable_jurisdiction: 'DE' }], rates: { DE: { standard: '19.00' } }, submit_when: 'paid' },
    };
    settingsPath = join(dir, 'settings.json');
    writeFileSync(settingsPath, JSON.stringify(settingsJson));
    daemon = await startDaemon(ctx.url, ctx.prefix, {
      settings: parseSettings(settingsJson),
      emulator: { entities: [{ id: ENTITY, name: 'Beta GmbH' }] },
      env: {
        // The workers' credentials are unknown to the emulator at first (API_AUTH_FAILED).
        TAX_API_CLIENT_ID: WORKER.id,
        TAX_API_CLIENT_SECRET: WORKER.secret,
        TAXSYNC_MAX_ATTEMPTS: '3',
        TAXSYNC_VAT_MAX_ATTEMPTS: '3',
        TAXSYNC_VAT_BACKOFF_BASE_MS: '20',
        TAXSYNC_VAT_BACKOFF_CAP_MS: '200',
        TAXSYNC_WAIT_DEADLINE_S: '1',
        TAXSYNC_REFUND_WAIT: '1s',
        TAX_API_HEADERS_TIMEOUT_MS: '2500',
        TAXSYNC_CONFIG: settingsPath,
      },
    });
    deadLetters = createDeadLetterStore(daemon.queues['dead-letter']);
  });

  afterEach(async () => {
    await daemon.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function cli(args: string[]): Promise<{ code: number | null; stdout: string; output: string }> {
    const run = spawnCli(main, args, { REDIS_URL: ctx.url, TAXSYNC_PREFIX: ctx.prefix, TAXSYNC_CONFIG: settingsPath, LOG_LEVEL: 'error' });
    let stdout = '';
    run.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    const { code } = await run.exited;
    return { code, stdout, output: run.output() };
  }
  const json = async <T>(args: string[]): Promise<T> => {
    const run = await cli([...args, '--json']);
    expect(run.code, run.output).toBe(0);
    return JSON.parse(run.stdout) as T;
  };

  async function control(method: string, path: string, body?: unknown): Promise<void> {
    const res = await fetch(`${daemon.emulator.url}/__emulator/${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    expect(res.ok, `${method} /__emulator/${path}: ${res.status}`).toBe(true);
  }
  const setFaults = (rules: FaultRuleInput[]) => control('PUT', 'faults', { rules });
  const clearFaults = () => control('DELETE', 'faults');

  async function post(body: unknown): Promise<void> {
    expect((await daemon.post('erp', body)).status).toBe(202);
  }

  /** Waits for the entry of `externalId` (or, for record-less entries, the only one) with `code`. */
  async function entryOf(code: ErrorCode, externalId: string | null): Promise<DeadLetterEntry> {
    let found: DeadLetterEntry | undefined;
    await eventually(async () => {
      for await (const entry of deadLetters.all()) {
        if (entry.error.code === code && (entry.record?.external_id ?? null) === externalId) found = entry;
      }
      return found !== undefined;
    }, 60_000);
    return found!;
  }

  const inEngine = async (externalId: string) => (await daemon.api.tax.transactions.getByKey('api', externalId).catch(() => undefined)) !== undefined;
  const customerName = async (externalId: string) => (await daemon.api.tax.customers.getByKey('api', externalId).catch(() => undefined))?.name;

  it('fills the queue with every class, then lists, filters, replays, remaps, edits, discards, exports and audits', async () => {
    const registration = await daemon.api.vat.registrations.create({
      taxable_jurisdiction: 'DE',
      entity: ENTITY,
      registration_type: 'standard',
      date_of_registration: '2024-01-01',
    });
    // The entry of each class, by code (MAPPING_INVALID: the invoice without lines).
    const ids = {} as Record<
      Exclude<ErrorCode, 'CONFIG_INVALID' | 'API_INSECURE_URL' | 'LISTEN_FAILED' | 'API_RATE_LIMITED' | 'REDIS_UNAVAILABLE' | 'REQUEST_INVALID' | 'API_BAD_RESPONSE'>,
      string
    >;
    const keys = createKeys(ctx.prefix);

    // auth: the token endpoint refuses the workers' client credentials → at once.
    await post(erpCustomer('c-auth', 1));
    ids.API_AUTH_FAILED = (await entryOf('API_AUTH_FAILED', 'c-auth')).id;
    // The fix (an operator would correct TAX_API_CLIENT_ID / _SECRET): the service learns the client.
    await control('POST', 'clients', { client_id: WORKER.id, client_secret: WORKER.secret });

    // auth: every token presented is refused, also the fresh one → API_UNAUTHORIZED at once.
    await setFaults([{ kind: 'expire_token', route: 'customers.upsert' }]);
    await post(erpCustomer('c-unauth', 1));
    ids.API_UNAUTHORIZED = (await entryOf('API_UNAUTHORIZED', 'c-unauth')).id;

    // transient: an outage (500 on every invoice) outlasts the 3 attempts.
    const outageFrom = new Date();
    await setFaults([{ kind: 'error', route: 'transactions.upsert', status: 500 }]);
    await post(erpInvoice('INV-OUT-1', 1, [LINE]));
    await post(erpInvoice('INV-OUT-2', 1, [LINE]));
    const outage = [await entryOf('API_SERVER_ERROR', 'INV-OUT-1'), await entryOf('API_SERVER_ERROR', 'INV-OUT-2')];
    const outageTo = new Date(Date.now() + 1);
    expect(outage.map((e) => e.attempts)).toEqual([3, 3]);

    // transient: the connection drops after the request was processed (ambiguous), every time.
    await setFaults([{ kind: 'drop', route: 'customers.upsert' }]);
    await post(erpCustomer('c-drop', 1));
    ids.API_NETWORK = (await entryOf('API_NETWORK', 'c-drop')).id;

    // transient: no answer within TAX_API_HEADERS_TIMEOUT_MS, three times (2.5 s: headroom for a
    // loaded machine, where an ordinary answer must never time out).
    await setFaults([{ kind: 'latency', route: 'customers.upsert', ms: 6_000, times: 3 }]);
    await post(erpCustomer('c-slow', 1));
    ids.API_TIMEOUT = (await entryOf('API_TIMEOUT', 'c-slow')).id;

    // permission, not found, a status outside the contract: final at once.
    await setFaults([{ kind: 'error', route: 'transactions.upsert', status: 403 }]);
    await post(erpInvoice('INV-403', 1, [LINE]));
    ids.API_FORBIDDEN = (await entryOf('API_FORBIDDEN', 'INV-403')).id;
    await setFaults([{ kind: 'error', route: 'customers.upsert', status: 404 }]);
    await post(erpCustomer('c-404', 1));
    ids.API_NOT_FOUND = (await entryOf('API_NOT_FOUND', 'c-404')).id;
    await setFaults([{ kind: 'error', route: 'customers.upsert', status: 418 }]);
    await post(erpCustomer('c-418', 1));
    ids.API_UNEXPECTED_STATUS = (await entryOf('API_UNEXPECTED_STATUS', 'c-418')).id;
    await clearFaults();

    // invalid (422 with field errors): someone refunded 80 % of INV-422 directly in the engine,
    // so taxsync's 50 % refund would take the refunds past the whole invoice.
    await post(erpInvoice('INV-422', 1, [{ unit_price: '100.00', quantity: '2' }]));
    await eventually(() => inEngine('INV-422'));
    const invoice = await daemon.api.tax.transactions.getByKey('api', 'INV-422');
    await daemon.api.tax.transactions.upsert({
      source: 'api',
      external_id: 'refund-manual-1',
      transaction_type: 'refund',
      created_from: invoice.id,
      refund_info: { is_refund_linked: true, refund_linked_percentage: '0.8' },
      items: [{ unit_price: '160.00' }],
    });
    await post(erpRefund('refund-R-422', 2, 'INV-422', '100.00'));
    ids.API_INVALID = (await entryOf('API_INVALID', 'refund-R-422')).id;

    // invalid, found locally: an invoice without lines cannot become a request.
    await post(erpInvoice('INV-EMPTY', 1, []));
    ids.MAPPING_INVALID = (await entryOf('MAPPING_INVALID', 'INV-EMPTY')).id;

    // waiting: a refund whose invoice never arrives (TAXSYNC_REFUND_WAIT=1s); its VAT correction
    // waits for the invoice too (issue 15) and runs out the same way on the vat-submissions queue;
    // and an exemption whose customer never does (TAXSYNC_WAIT_DEADLINE_S=1).
    await post(erpRefund('refund-R-ORPHAN', 2, 'INV-LATE', '10.00'));
    ids.REFUND_ORIGINAL_MISSING = (await entryOf('REFUND_ORIGINAL_MISSING', 'refund-R-ORPHAN')).id;
    await eventually(async () => (await deadLetters.list({ limit: 100 })).filter((e) => e.record?.external_id === 'refund-R-ORPHAN').length === 2, 60_000);
    await post(erpExemption('EX-ORPHAN', 1, 'c-late'));
    ids.WAITING_EXPIRED = (await entryOf('WAITING_EXPIRED', 'EX-ORPHAN')).id;

    // A refund lock left by a crashed worker (never dead-lettered: the refund goes once the lock
    // expires), and internal (Redis answers an error mid-job).
    await post(erpInvoice('INV-BUSY', 1, [LINE]));
    await post(erpInvoice('INV-BROKEN', 1, [LINE]));
    await eventually(async () => (await inEngine('INV-BUSY')) && (await inEngine('INV-BROKEN')));
    await ctx.redis.set(`${keys.refunds('transaction|api|INV-BUSY')}:lock`, 'crashed-worker', 'PX', 3_000);
    await ctx.redis.set(keys.refunds('transaction|api|INV-BROKEN'), 'not a hash');
    await post(erpRefund('refund-R-BUSY', 2, 'INV-BUSY', '10.00'));
    await post(erpRefund('refund-R-BROKEN', 2, 'INV-BROKEN', '10.00'));
    ids.INTERNAL_ERROR = (await entryOf('INTERNAL_ERROR', 'refund-R-BROKEN')).id;
    await eventually(() => inEngine('refund-R-BUSY'), 60_000);

    // invalid: a signed delivery the ERP connector cannot read is kept raw.
    await post({ ...erpCustomer('c-garbled', 1), occurred_at: 'yesterday' });
    ids.INVALID_PAYLOAD = (await entryOf('INVALID_PAYLOAD', null)).id;

    // invalid: a job taxsync cannot read (written by an incompatible version).
    await daemon.queues.customers.add('customer', { v: 99, record: 'c-legacy' }, { jobId: 'customer|api|c-legacy' });
    ids.JOB_INVALID = (await entryOf('JOB_INVALID', null)).id;

    // conflict and a local VAT check: the VAT service already knows VAT-DUP (another system sent
    // it); VAT-BADNR carries a VAT number in no valid German format.
    await daemon.api.vat.submitTransaction(vatBody(registration.entity_jurisdiction!, { invoice_number: 'VAT-DUP', reporting_period: '2026-11-01', invoice_date: '2026-11-20' }) as never);
    await post(germanInvoice('VAT-DUP', 'DE123456789'));
    ids.VAT_DUPLICATE = (await entryOf('VAT_DUPLICATE', 'VAT-DUP')).id;
    await post(germanInvoice('VAT-BADNR', 'DE12'));
    const badVatNumber = await entryOf('MAPPING_INVALID', 'VAT-BADNR');

    // ---- Review: what is there, and why ----------------------------------------------------
    const stats = await json<{ total: number; by_queue: Record<string, number>; by_code: Record<string, number> }>(['dlq', 'stats']);
    expect(stats).toEqual({
      total: 19,
      by_queue: { customers: 8, transactions: 7, 'vat-submissions': 3, ingest: 1 },
      by_code: {
        API_AUTH_FAILED: 1,
        API_UNAUTHORIZED: 1,
        API_SERVER_ERROR: 2,
        API_NETWORK: 1,
        API_TIMEOUT: 1,
        API_FORBIDDEN: 1,
        API_NOT_FOUND: 1,
        API_UNEXPECTED_STATUS: 1,
        API_INVALID: 1,
        MAPPING_INVALID: 2,
        REFUND_ORIGINAL_MISSING: 2,
        WAITING_EXPIRED: 1,
        INTERNAL_ERROR: 1,
        INVALID_PAYLOAD: 1,
        JOB_INVALID: 1,
        VAT_DUPLICATE: 1,
      },
    });

    // The table: one line per entry (messages are one line), newest failure first.
    const table = await cli(['dlq', 'list', '--limit', '100']);
    expect(table.code).toBe(0);
    const rows = table.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ID\s+LAST FAILED\s+QUEUE\s+CODE\s+CONNECTION\s+SUBJECT\s+MESSAGE$/);
    expect(rows).toHaveLength(1 + 19 + 1);
    expect(rows.at(-1)).toBe('19 of 19 shown');
    expect(rows[1]).toContain('MAPPING_INVALID');
    expect(rows[1]).toContain('vat api/VAT-BADNR');
    const page = await json<{ total: number; entries: DeadLetterEntry[] }>(['dlq', 'list', '--limit', '5', '--offset', '2']);
    expect(page.total).toBe(19);
    expect(page.entries.map((e) => e.id)).toEqual(
      (await json<{ entries: DeadLetterEntry[] }>(['dlq', 'list', '--limit', '100'])).entries.slice(2, 7).map((e) => e.id),
    );

    // Filters, alone and combined.
    const listed = async (...filter: string[]) => (await json<{ entries: DeadLetterEntry[] }>(['dlq', 'list', '--limit', '100', ...filter])).entries;
    const subjects = (entries: DeadLetterEntry[]) => entries.map((e) => `${e.error.code} ${e.record?.external_id ?? '-'}`).sort();
    expect(subjects(await listed('--queue', 'ingest'))).toEqual(['INVALID_PAYLOAD -']);
    expect(subjects(await listed('--queue', 'vat-submissions'))).toEqual(['MAPPING_INVALID VAT-BADNR', 'REFUND_ORIGINAL_MISSING refund-R-ORPHAN', 'VAT_DUPLICATE VAT-DUP']);
    expect(subjects(await listed('--code', 'api_server_error'))).toEqual(['API_SERVER_ERROR INV-OUT-1', 'API_SERVER_ERROR INV-OUT-2']);
    expect(subjects(await listed('--source', 'erp'))).toEqual(['INVALID_PAYLOAD -']); // the connector of a kept delivery
    expect(await listed('--source', 'api')).toHaveLength(17); // every entry with a record
    expect(subjects(await listed('--external-id', 'c-404'))).toEqual(['API_NOT_FOUND c-404']);
    expect(subjects(await listed('--text', 'MORE THAN THE WHOLE'))).toEqual(['API_INVALID refund-R-422']);
    expect(subjects(await listed('--since', outageFrom.toISOString(), '--until', outageTo.toISOString()))).toEqual([
      'API_SERVER_ERROR INV-OUT-1',
      'API_SERVER_ERROR INV-OUT-2',
    ]);
    expect(subjects(await listed('--queue', 'transactions', '--code', 'API_SERVER_ERROR', '--external-id', 'INV-OUT-2'))).toEqual(['API_SERVER_ERROR INV-OUT-2']);
    const badSince = await cli(['dlq', 'list', '--since', 'yesterday']);
    expect(badSince.code).toBe(1);
    expect(badSince.output).toContain('--since must be an ISO 8601 date');

    // One entry in full: field errors, the exchange without any credential.
    const shown = await cli(['dlq', 'show', ids.API_INVALID]);
    expect(shown.stdout).toContain('error       API_INVALID: PUT /v1/transactions/ answered 422');
    expect(shown.stdout).toMatch(/refund_info\.refund_linked_percentage: .*more than the whole/);
    expect(shown.stdout).toContain('request     PUT');
    expect(shown.stdout).toContain('response    422');
    expect(shown.stdout).not.toMatch(/authorization|bearer|eyJ[\w-]+\.[\w-]+\./i);
    const raw = await cli(['dlq', 'show', ids.INVALID_PAYLOAD]);
    expect(raw.stdout).toContain('delivery    erp');
    expect(raw.stdout).toContain('"occurred_at":"yesterday"');
    expect((await json<DeadLetterEntry>(['dlq', 'show', outage[0]!.id])).attempts).toBe(3);

    // ---- The outage is over (faults cleared): replay it, twice ------------------------------
    const dry = await cli(['dlq', 'replay', '--code', 'API_SERVER_ERROR', '--dry-run']);
    expect(dry.stdout).toContain('plan: replay 2 entries (transactions 2; API_SERVER_ERROR 2)');
    const replayed = await json<{ counts: Record<string, number> }>(['dlq', 'replay', '--code', 'API_SERVER_ERROR', '--yes', '--actor', ACTOR]);
    expect(replayed.counts).toMatchObject({ replayed: 2 });
    await eventually(async () => (await inEngine('INV-OUT-1')) && (await inEngine('INV-OUT-2')), 60_000);
    for (const entry of outage) expect(await deadLetters.get(entry.id)).toBeUndefined();
    const again = await cli(['dlq', 'replay', '--code', 'API_SERVER_ERROR', '--yes', '--actor', ACTOR]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('plan: replay 0 entries');
    const byId = await cli(['dlq', 'replay', outage[0]!.id, '--yes', '--actor', ACTOR]);
    expect(byId.code).toBe(1);
    expect(byId.output).toContain(`no dead-letter entry ${outage[0]!.id}`);
    await eventually(() => daemon.idle(), 60_000);
    const accepted = (key: string) =>
      daemon.emulator.requestLog.entries().filter((e) => (e.endpoint ?? '').endsWith('.upsert') && e.record?.key === key && e.status !== null && e.status < 300).length;
    expect(accepted('transaction:api:INV-OUT-1')).toBe(1);
    expect(accepted('transaction:api:INV-OUT-2')).toBe(1);
    expect(daemon.emulator.state.transactions.live().filter(({ value }) => value.external_id.startsWith('INV-OUT-'))).toHaveLength(2);

    // Credentials fixed, faults cleared: the API failures go again, by id.
    const apiIds = [ids.API_AUTH_FAILED, ids.API_NETWORK, ids.API_TIMEOUT, ids.API_FORBIDDEN, ids.API_NOT_FOUND, ids.API_UNEXPECTED_STATUS];
    expect((await json<{ counts: Record<string, number> }>(['dlq', 'replay', ...apiIds, '--yes', '--actor', ACTOR])).counts).toMatchObject({ replayed: 6 });
    await eventually(async () => {
      for (const id of ['c-auth', 'c-drop', 'c-slow', 'c-404', 'c-418']) if ((await customerName(id)) === undefined) return false;
      return inEngine('INV-403');
    }, 60_000);

    // ---- --remap: the record moved on meanwhile; its latest state is what is sent -----------
    await post(erpCustomer('c-unauth', 2));
    await eventually(async () => (await customerName('c-unauth')) === 'c-unauth version 2');
    const plain = await cli(['dlq', 'replay', ids.API_UNAUTHORIZED, '--dry-run']);
    expect(plain.stdout).toContain('plan: replay 1 entry (customers 1; API_UNAUTHORIZED 1)');
    const sentBefore = accepted('customer:api:c-unauth');
    const remapped = await json<{ results: { outcome: string; detail: string }[] }>(['dlq', 'replay', ids.API_UNAUTHORIZED, '--remap', '--yes', '--actor', ACTOR]);
    expect(remapped.results).toEqual([{ id: ids.API_UNAUTHORIZED, outcome: 'remapped', detail: expect.stringContaining('from its latest state (event erp-c-unauth-v2)') }]);
    await eventually(() => accepted('customer:api:c-unauth') === sentBefore + 1, 60_000);
    expect(await customerName('c-unauth')).toBe('c-unauth version 2');
    const trace = await readTrace(ctx.redis, keys, 'customer|api|c-unauth');
    expect(trace.map((t) => t.step)).toContain('dead-lettered');
    expect(trace.find((t) => t.step === 'replayed')?.detail).toContain(`remapped to the latest state by ${ACTOR}`);

    // ---- edit --patch: a locally invalid event, fixed and sent ------------------------------
    const patch = (name: string, value: unknown) => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(value));
      return path;
    };
    const refused = await cli(['dlq', 'edit', ids.MAPPING_INVALID, '--patch', patch('bad.json', { record: { external_id: 'INV-OTHER' } }), '--actor', ACTOR]);
    expect(refused.code).toBe(1);
    expect(refused.output).toContain("refused: the patch changes the event's record");
    const lines = { data: { lines: [{ id: '1', name: 'widget', unit_price: '25.00', quantity: '2' }] } };
    const edit = await cli(['dlq', 'edit', ids.MAPPING_INVALID, '--patch', patch('lines.json', lines), '--actor', ACTOR]);
    expect(edit.code, edit.output).toBe(0);
    expect(edit.stdout).toContain(`entry ${ids.MAPPING_INVALID}: edited event (data.lines); the original is kept`);
    const editedEntry = await json<DeadLetterEntry>(['dlq', 'show', ids.MAPPING_INVALID]);
    expect(editedEntry.edited).toMatchObject({ actor: ACTOR, count: 1 });
    expect(editedEntry.event_original).toMatchObject({ data: { lines: [] } });
    expect((await json<{ counts: Record<string, number> }>(['dlq', 'replay', ids.MAPPING_INVALID, '--yes', '--actor', ACTOR])).counts).toMatchObject({ replayed: 1 });
    await eventually(() => inEngine('INV-EMPTY'), 60_000);
    expect((await daemon.api.tax.transactions.getByKey('api', 'INV-EMPTY')).items).toHaveLength(1);

    // The same for the VAT number, checked locally before any call.
    await cli(['dlq', 'edit', badVatNumber.id, '--patch', patch('vat.json', { data: { customer: { tax_number: 'DE123456789' } } }), '--actor', ACTOR]);
    expect((await json<{ counts: Record<string, number> }>(['dlq', 'replay', badVatNumber.id, '--yes', '--actor', ACTOR])).counts).toMatchObject({ replayed: 1 });
    await eventually(() => daemon.emulator.state.vatTransactions.live().some(({ value }) => value.invoice_number === 'VAT-BADNR'), 60_000);

    // ---- the other fixes, then replay -------------------------------------------------------
    await post(erpInvoice('INV-LATE', 1, [LINE])); // the invoice the refund waited for
    await eventually(() => inEngine('INV-LATE'), 60_000);
    expect((await json<{ counts: Record<string, number> }>(['dlq', 'replay', '--external-id', 'refund-R-ORPHAN', '--yes', '--actor', ACTOR])).counts).toMatchObject({ replayed: 2 });
    await post(erpCustomer('c-late', 1)); // the customer the exemption waited for
    await eventually(async () => (await customerName('c-late')) !== undefined, 60_000);
    expect((await json<{ counts: Record<string, number> }>(['dlq', 'replay', '--external-id', 'EX-ORPHAN', '--yes', '--actor', ACTOR])).counts).toMatchObject({ replayed: 1 });
    await ctx.redis.del(keys.refunds('transaction|api|INV-BROKEN'));
    expect((await json<{ counts: Record<string, number> }>(['dlq', 'replay', ids.INTERNAL_ERROR, '--yes', '--actor', ACTOR])).counts).toMatchObject({ replayed: 1 });
    await eventually(async () => (await inEngine('refund-R-ORPHAN')) && (await inEngine('refund-R-BUSY')) && (await inEngine('refund-R-BROKEN')), 60_000);
    const lateCustomer = (await daemon.api.tax.customers.getByKey('api', 'c-late')).id;
    await eventually(async () => (await daemon.api.tax.exemptions.list({ limit: 100 })).data.some((e) => e.customer_id === lateCustomer), 60_000);

    // The kept delivery: still unreadable (kept, exit 2) until its body is fixed.
    const stillBad = await cli(['dlq', 'replay', ids.INVALID_PAYLOAD, '--yes', '--actor', ACTOR]);
    expect(stillBad.code).toBe(2);
    expect(stillBad.stdout).toContain('1 still-invalid');
    await cli(['dlq', 'edit', ids.INVALID_PAYLOAD, '--patch', patch('date.json', { occurred_at: '2026-11-20T10:00:01Z' }), '--actor', ACTOR]);
    expect((await json<{ counts: Record<string, number> }>(['dlq', 'replay', ids.INVALID_PAYLOAD, '--yes', '--actor', ACTOR])).counts).toMatchObject({ accepted: 1 });
    await eventually(async () => (await customerName('c-garbled')) !== undefined, 60_000);

    // An unreadable job keeps no event: neither replay nor --remap can send it (exit 2).
    const skipped = await cli(['dlq', 'replay', ids.JOB_INVALID, '--yes', '--actor', ACTOR]);
    expect(skipped.code).toBe(2);
    expect(skipped.stdout).toContain('1 skipped');

    // ---- export what is left, then discard it ------------------------------------------------
    const exported = await cli(['dlq', 'export', '--actor', ACTOR]);
    expect(exported.code).toBe(0);
    const archive = exported.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as DeadLetterEntry);
    expect(subjects(archive)).toEqual(['API_INVALID refund-R-422', 'JOB_INVALID -', 'VAT_DUPLICATE VAT-DUP']);
    const refusedDiscard = await cli(['dlq', 'discard', '--code', 'API_INVALID']);
    expect(refusedDiscard.code).toBe(1);
    expect(refusedDiscard.output).toContain('add --yes');
    expect((await cli(['dlq', 'discard', '--code', 'API_INVALID', '--yes', '--actor', ACTOR])).stdout).toContain('1 entries discarded');
    expect((await cli(['dlq', 'discard', ids.VAT_DUPLICATE, ids.JOB_INVALID, '--yes', '--actor', ACTOR])).stdout).toContain('2 entries discarded');

    const status = await json<{ dead_letter: { total: number } }>(['status']);
    expect(status.dead_letter.total).toBe(0);
    expect(await deadLetters.count()).toBe(0);

    // ---- the audit log: every action, who, when, what, how many ------------------------------
    const audit = (await json<AuditEntry[]>(['dlq', 'audit', '--limit', '100'])).reverse();
    expect(audit.every((a) => a.actor === ACTOR && !Number.isNaN(Date.parse(a.at)))).toBe(true);
    expect(audit.map((a) => [a.action, a.count, a.outcome, a.filter ?? a.ids])).toEqual([
      ['replay', 2, '2 replayed', { code: 'API_SERVER_ERROR' }],
      ['replay', 6, '6 replayed', apiIds],
      ['replay', 1, '--remap: 1 remapped', [ids.API_UNAUTHORIZED]],
      ['edit', 1, expect.stringContaining('edited event (data.lines)'), [ids.MAPPING_INVALID]],
      ['replay', 1, '1 replayed', [ids.MAPPING_INVALID]],
      ['edit', 1, expect.stringContaining('edited event (data.customer.tax_number)'), [badVatNumber.id]],
      ['replay', 1, '1 replayed', [badVatNumber.id]],
      ['replay', 2, '2 replayed', { external_id: 'refund-R-ORPHAN' }],
      ['replay', 1, '1 replayed', { external_id: 'EX-ORPHAN' }],
      ['replay', 1, '1 replayed', [ids.INTERNAL_ERROR]],
      ['replay', 1, '1 still-invalid', [ids.INVALID_PAYLOAD]],
      ['edit', 1, expect.stringContaining('edited raw body (occurred_at)'), [ids.INVALID_PAYLOAD]],
      ['replay', 1, '1 accepted', [ids.INVALID_PAYLOAD]],
      ['replay', 1, '1 skipped', [ids.JOB_INVALID]],
      ['export', 3, '3 exported', {}],
      ['discard', 1, expect.stringContaining('1 discarded'), { code: 'API_INVALID' }],
      ['discard', 2, expect.stringContaining('2 discarded'), [ids.VAT_DUPLICATE, ids.JOB_INVALID]],
    ]);
    const auditTable = await cli(['dlq', 'audit']);
    expect(auditTable.stdout).toMatch(/^AT\s+ACTOR\s+ACTION\s+COUNT\s+ENTRIES\s+OUTCOME/);
    expect(auditTable.stdout).toContain('--code API_SERVER_ERROR');
  }, 480_000);
});
