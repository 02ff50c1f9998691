import { describe, expect, it } from 'vitest';
import { chaosEvents, feed, killRedisServer, upserts, useChaosRig, Workload } from '../helpers/chaos.js';
import { eventually } from '../helpers/pipeline.js';
import { freePort } from '../helpers/redis-global-setup.js';
import { uniquePrefix } from '../helpers/redis.js';

/**
 * Chaos (issue 9, test 1; DESIGN.md invariants 1, 2 and 5): Redis (AOF, fsync always) is SIGKILLed
 * while webhooks are being stored and workers are sending, and restarted on the same port and data
 * directory a second later. The same `taxsync start` process reconnects by itself, every
 * acknowledged event survives, every record ends in the services with its last state and no VAT
 * submission is accepted twice. `npm run test:chaos` runs the long form (TAXSYNC_CHAOS_EVENTS events).
 */
const EVENTS = chaosEvents(1_500);
/** How long after Redis answers again a 503 may still come back (ioredis reconnects within 2 s). */
const RECONNECT_GRACE_MS = 10_000;
const SETTLE_MS = Math.max(45_000, EVENTS * 20);

describe('Redis killed and restarted while events are stored and sent', () => {
  const rig = useChaosRig();

  it('loses no acknowledged event, and the same daemon process applies the last state of every record', async () => {
    const redis = await rig.redis();
    const workload = new Workload('REDIS', EVENTS);
    // Room for every request (the default keeps the last 1,000), for the summary printed at the end.
    const running = await rig.emulator({ requestLogLimit: EVENTS * 10 });
    const prefix = uniquePrefix();
    const httpPort = await freePort();
    const daemon = rig.spawn(['start'], {
      ...rig.env(redis.url, prefix, running.url),
      TAXSYNC_HTTP_PORT: String(httpPort),
      TAXSYNC_CONCURRENCY_CUSTOMERS: '16',
      TAXSYNC_CONCURRENCY_TRANSACTIONS: '16',
    });
    await daemon.waitFor('taxsync is running');
    const pid = daemon.child.pid;

    // Every event in signed batches, like a platform: a 503 is retried, a 202 means stored. A 503
    // can come after the MULTI committed (its reply lost with Redis): the retry is then a
    // duplicate delivery, answered 200 because it is stored (the delivery marker commits with
    // the events); feed() takes that only as the answer to a retry.
    const fed = feed({ url: () => `http://127.0.0.1:${httpPort}`, events: workload.events, deadlineMs: SETTLE_MS, retry: (s) => s === 503 });

    // The chaos: once a third of the batches are stored and the workers are sending, SIGKILL
    // Redis, wait a second, start it again on the same port and directory (it replays its AOF).
    await eventually(() => fed.stored() >= fed.batches / 3 && upserts(running).some((e) => e.outcome === 'in_flight'), 30_000);
    const killedAt = Date.now();
    const atKill = {
      stored: fed.stored(),
      answered: upserts(running).filter((e) => e.outcome === 'answered').length,
      inFlight: upserts(running).filter((e) => e.outcome === 'in_flight').length,
    };
    await killRedisServer(redis.server());
    await new Promise((r) => setTimeout(r, 1_000));
    await redis.restart();
    const restartedAt = Date.now();

    await fed.done;

    // A 503 only while Redis was down (or the daemon's connection had not come back yet).
    const refused = fed.posts.filter((p) => p.status === 503);
    for (const p of refused) {
      expect(p.answeredAt).toBeGreaterThanOrEqual(killedAt);
      expect(p.startedAt).toBeLessThanOrEqual(restartedAt + RECONNECT_GRACE_MS);
    }

    await workload.settled(running, SETTLE_MS, () => daemon.output().slice(-4_000));

    // The same process did it all: it reconnected by itself.
    expect(daemon.child.pid).toBe(pid);
    expect(daemon.child.exitCode, daemon.output()).toBeNull();
    expect(daemon.child.signalCode).toBeNull();

    // Redis agrees: every record applied at its newest version, every acknowledged event stored,
    // no dead letter.
    await workload.expectStored(redis.connect(), prefix, fed.acknowledged());
    console.info(
      `chaos (Redis killed): ${workload.events.length} events in ${fed.batches} batches, ${workload.records} records, ${refused.length} POSTs refused with 503 and retried ` +
        `(${fed.posts.filter((p) => p.status === 200).length} of them stored before the 503: their retry was a duplicate), ` +
        `${upserts(running).length} upserts, redis down ${restartedAt - killedAt} ms; at the kill: ${atKill.stored} batches stored, ` +
        `${atKill.answered} upserts answered, ${atKill.inFlight} in flight`,
    );
  }, 2 * SETTLE_MS + 60_000);
});
