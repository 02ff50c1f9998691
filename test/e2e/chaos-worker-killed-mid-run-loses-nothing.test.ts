import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { DEFAULT_CLIENT } from '../../src/emulator/index.js';
import { BUSY_API, chaosEvents, feed, NEVER_GIVE_UP, upserts, useChaosRig, Workload } from '../helpers/chaos.js';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { eventually } from '../helpers/pipeline.js';
import { useRedis } from '../helpers/redis.js';

/**
 * Chaos (issue 9, test 2; DESIGN.md invariants 1, 2 and 5): of two `taxsync work` processes, one
 * is SIGKILLed while it has requests in flight (tax-engine upserts and VAT submissions). Its jobs
 * are recovered as stalled jobs by the survivor and by a restarted worker; every record ends with
 * its last state and no VAT submission is accepted twice. `npm run test:chaos` runs the long form.
 */
const EVENTS = chaosEvents(300);
const SETTLE_MS = Math.max(60_000, EVENTS * 30);
const WORKERS = {
  doomed: { clientId: 'worker-doomed', clientSecret: 'worker-doomed-secret' },
  survivor: { clientId: 'worker-survivor', clientSecret: 'worker-survivor-secret' },
  restarted: { clientId: 'worker-restarted', clientSecret: 'worker-restarted-secret' },
};

describe('a worker process SIGKILLed mid-run', () => {
  const ctx = useRedis();
  const rig = useChaosRig();
  let daemon: Daemon | undefined;

  afterEach(async () => {
    await daemon?.stop();
    daemon = undefined;
  });

  it('has its jobs recovered by the other workers: nothing lost, every record at its last state, no VAT duplicate', async () => {
    const workload = new Workload('KILLW', EVENTS);
    // Webhooks in this process (jobs get their attempts from here, the producer); workers are
    // child processes, each with its own API client so the request log tells them apart.
    daemon = await startDaemon(ctx.url, ctx.prefix, {
      work: false,
      settings: loadSettings(rig.settingsFile),
      env: NEVER_GIVE_UP,
      emulator: { clients: [DEFAULT_CLIENT, ...Object.values(WORKERS)], requestLogLimit: EVENTS * 10, faults: BUSY_API },
    });
    const running = daemon;
    const worker = (client: { clientId: string; clientSecret: string }) =>
      rig.spawn(['work'], { ...rig.env(ctx.url, ctx.prefix, running.emulator.url), TAX_API_CLIENT_ID: client.clientId, TAX_API_CLIENT_SECRET: client.clientSecret });
    const doomed = worker(WORKERS.doomed);
    const survivor = worker(WORKERS.survivor);
    const output = () => `--- killed:\n${doomed.output().slice(-2_000)}\n--- survivor:\n${survivor.output().slice(-2_000)}`;

    const fed = feed({ url: () => running.webhookUrl, events: workload.events, deadlineMs: SETTLE_MS });

    // The kill: once a third of the batches are stored and the doomed worker has upserts and a
    // VAT submission in flight.
    const mine = (endpoints: string[]) =>
      running.emulator.requestLog.entries().filter((e) => e.client_id === WORKERS.doomed.clientId && e.outcome === 'in_flight' && endpoints.includes(e.endpoint ?? ''));
    await eventually(
      () => fed.stored() >= fed.batches / 3 && mine(['customers.upsert', 'transactions.upsert']).length > 0 && mine(['vat.submit']).length > 0,
      SETTLE_MS,
    ).catch(() => {
      throw new Error(`the doomed worker never had requests in flight\n${output()}`);
    });
    const cutOff = mine(['customers.upsert', 'transactions.upsert', 'vat.submit']).map((e) => e.record!.key);
    const vatCutOff = mine(['vat.submit']).map((e) => e.record!.key);
    doomed.child.kill('SIGKILL');
    expect((await doomed.exited).signal).toBe('SIGKILL');
    const restarted = worker(WORKERS.restarted);

    await fed.done;
    await workload.settled(running.emulator, SETTLE_MS, () => `${output()}\n--- restarted:\n${restarted.output().slice(-2_000)}`);
    await workload.expectStored(ctx.redis, ctx.prefix, fed.acknowledged());

    // The cut-off jobs came back as stalled jobs, to a worker still alive, and were finished there.
    expect(survivor.output() + restarted.output()).toContain('stalled job recovered');
    // A VAT submission made but not answered before the kill was resent by another worker once its
    // lease ran out, met the duplicate check, and counted as accepted (not accepted twice: above).
    const submits = running.emulator.requestLog.entries().filter((e) => e.endpoint === 'vat.submit');
    for (const key of vatCutOff) {
      expect(submits.some((e) => e.record?.key === key && e.client_id !== WORKERS.doomed.clientId && e.status === 422), key).toBe(true);
    }
    expect(survivor.child.exitCode, survivor.output()).toBeNull();
    expect(restarted.child.exitCode, restarted.output()).toBeNull();
    console.info(
      `chaos (worker killed): ${workload.events.length} events, ${workload.records} records, ${upserts(running.emulator).length} upserts, ` +
        `${cutOff.length} requests cut off by the kill (${vatCutOff.length} VAT submissions), ${submits.length} VAT submissions`,
    );
  }, 2 * SETTLE_MS + 60_000);
});
