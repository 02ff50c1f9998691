import fc from 'fast-check';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients } from '../../src/api/index.js';
import { recordKeyString } from '../../src/domain/record-key.js';
import { Secret } from '../../src/domain/secret.js';
import { DEFAULT_CLIENT } from '../../src/emulator/index.js';
import type { Logger } from '../../src/observability/logger.js';
import { createMetrics } from '../../src/observability/metrics.js';
import type { HandlerContext } from '../../src/processors/types.js';
import { reconcileVat } from '../../src/vat-ops/commands.js';
import { renderReconcile } from '../../src/vat-ops/reconcile.js';
import { renderLedgerEntry, showLedgerEntry } from '../../src/vat-ops/ledger-commands.js';
import { startFakeApi, type FakeApi } from '../helpers/fake-api.js';
import { useRedis } from '../helpers/redis.js';
import { createVatRig, invoiceEvent, vatRecord, type VatRig } from '../helpers/vat-rig.js';

/**
 * A VAT submission the service stored (2xx) but will not report as it is: its transaction says
 * `committed: false` (not committed to reporting), or `validity_status` / `compliance_status`
 * `error` (vat-compliance-api.md, "VAT transaction (response)"). Sending it again would be a
 * duplicate, so it stays confirmed — but it must not pass for filed and fine: the ledger entry says
 * so, the trace has a line, `taxsync_vat_submissions_total{outcome="accepted_with_errors"}` counts
 * it, a warn line is logged, and `vat ledger show` and `vat reconcile` list it (reconcile does not
 * call a period that holds one a match), so an operator sees it within minutes.
 *
 * A local server on port 0 forwards the submission to the emulator (which stores it) and answers
 * with the emulator's transaction, its three fields replaced as the case says.
 */

const SUBMIT = 'POST /api/vat/v1/transactions/';

type Flag<T> = T | 'absent';
interface Answer {
  status: 200 | 201;
  committed: Flag<boolean | null | 'false'>;
  validity: Flag<string>;
  compliance: Flag<string>;
}

describe('an accepted VAT submission that will not be reported is surfaced', () => {
  const ctx = useRedis();
  let rig: VatRig;
  let front: FakeApi;
  let api: ApiClients;
  let answer: Answer | undefined;

  beforeAll(async () => {
    front = await startFakeApi();
    front.fallback(async (req, res) => {
      const upstream = await request(`${rig.emulator.url}${req.url}`, {
        method: req.method as 'GET' | 'POST',
        headers: { 'content-type': req.headers['content-type'] ?? 'application/json', authorization: req.headers.authorization ?? '' },
        ...(req.method === 'GET' ? {} : { body: req.body }),
      });
      const text = await upstream.body.text();
      if (`${req.method} ${req.path}` !== SUBMIT || answer === undefined) {
        res.writeHead(upstream.statusCode, { 'content-type': 'application/json' });
        res.end(text);
        return;
      }
      expect(upstream.statusCode).toBe(201);
      const body = JSON.parse(text) as Record<string, unknown>;
      const set = (field: string, value: unknown) => {
        if (value === 'absent') delete body[field];
        else body[field] = value;
      };
      set('committed', answer.committed);
      set('validity_status', answer.validity);
      set('compliance_status', answer.compliance);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    rig = await createVatRig({ url: ctx.url, prefix: ctx.prefix });
    api = createApiClients({ taxUrl: rig.emulator.url, vatUrl: front.url, clientId: DEFAULT_CLIENT.clientId, clientSecret: new Secret(DEFAULT_CLIENT.clientSecret) });
  });
  afterAll(async () => {
    await api.close();
    await rig.close();
    await front.close();
  });

  const flags = fc.record({
    status: fc.constantFrom(200 as const, 201 as const),
    committed: fc.constantFrom<Flag<boolean | null | 'false'>>(true, false, null, 'false', 'absent'),
    validity: fc.constantFrom<Flag<string>>('valid', 'warning', 'error', 'pending_review', 'absent'),
    compliance: fc.constantFrom<Flag<string>>('valid', 'warning', 'error', 'not_assessed', 'absent'),
  });

  it('keeps it confirmed and says so wherever an operator looks', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(flags, async (flagsNow) => {
        run += 1;
        answer = flagsNow;
        const what = JSON.stringify(flagsNow);
        // The contract's fields as documented: a boolean `committed`, `error` among the statuses.
        const problems = [
          ...(flagsNow.committed === false ? ['committed: false'] : []),
          ...(flagsNow.validity === 'error' ? ['validity_status: error'] : []),
          ...(flagsNow.compliance === 'error' ? ['compliance_status: error'] : []),
        ];
        const number = `INV-C${String(run).padStart(3, '0')}`;
        const record = vatRecord(number);
        const metrics = createMetrics({ defaultMetrics: false });
        const warned: { object: Record<string, unknown>; message: string }[] = [];
        const traced: { step: string; detail?: string }[] = [];
        const logger = {
          warn: (object: Record<string, unknown>, message: string) => warned.push({ object, message }),
          info: () => undefined,
          error: () => undefined,
          debug: () => undefined,
        } as unknown as Logger;
        await rig.accept(invoiceEvent(number, 1, [['100.00', '0.19']]));
        const state = await rig.records.read(record);
        const context: HandlerContext = { record, state, logger, trace: (entry) => Promise.resolve(void traced.push(entry)), sending: () => Promise.resolve(), keep: () => undefined };
        const outcome = await rig.handler({ vat: api.vat, metrics })(state.event!, context);
        expect(outcome.kind, what).toBe('done');

        // Stored once, never to be sent again: confirmed.
        const [entry] = await rig.ledger.forRecord(recordKeyString(record));
        expect(entry?.state, what).toBe('confirmed');
        expect(rig.emulator.state.vatTransactions.live().filter((t) => t.value.invoice_number === number), what).toHaveLength(1);
        const counted = (await metrics.registry.getSingleMetric('taxsync_vat_submissions_total')!.get()).values.filter((v) => v.value > 0).map((v) => v.labels.outcome);
        const shown = renderLedgerEntry((await showLedgerEntry({ ledger: rig.ledger }, entry!.entity_jurisdiction!, number))!);
        const report = await reconcileVat({ ledger: rig.ledger }, { period: '2025-Q1' });
        const listed = renderReconcile(report);
        if (problems.length === 0) {
          expect(entry?.attention, what).toBeUndefined();
          expect(counted, what).toEqual([flagsNow.status === 200 ? 'accepted_with_warnings' : 'accepted']);
          expect(warned, what).toEqual([]);
          expect(listed, what).not.toContain(number);
          return;
        }
        const says = problems.join('; ');
        expect(entry?.attention, what).toBe(says);
        expect(counted, what).toEqual(['accepted_with_errors']);
        expect(traced.map((t) => t.detail ?? ''), what).toContainEqual(expect.stringContaining(`VAT ${number} accepted, but the service will not report it as it is (${says})`));
        expect(warned.map((w) => w.message), what).toContainEqual(expect.stringContaining('will not report it as it is'));
        expect(warned.find((w) => w.message.includes('will not report'))?.object, what).toMatchObject({ invoice_number: number, problems });
        expect(shown, what).toContain(`not reported as it is: ${says}`);
        expect(report.ledger.attention.map((a) => a.invoice_number), what).toContain(number);
        expect(listed, what).toContain(number);
      }),
      { numRuns: 40, examples: [[{ status: 201, committed: false, validity: 'valid', compliance: 'valid' }], [{ status: 200, committed: true, validity: 'error', compliance: 'warning' }]] },
    );
  }, 120_000);
});
