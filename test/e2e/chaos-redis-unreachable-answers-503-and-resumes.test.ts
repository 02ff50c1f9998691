import { describe, expect, it } from 'vitest';
import { chaosEvents, feed, upserts, useChaosRig, Workload } from '../helpers/chaos.js';
import { eventually } from '../helpers/pipeline.js';
import { freePort } from '../helpers/redis-global-setup.js';
import { uniquePrefix } from '../helpers/redis.js';

/**
 * Chaos (issue 9, test 5; DESIGN.md invariant 1): Redis stops answering (SIGSTOP: its port still
 * takes connections, nothing comes back) for OUTAGE_S seconds while webhooks keep coming and the
 * workers are busy. Meanwhile every webhook answers 503 promptly — never a 202 with nothing stored,
 * never a hang — and so does /readyz. When Redis answers again (SIGCONT) the same `taxsync start`
 * process takes webhooks again and its workers carry on by themselves: every acknowledged event
 * is stored, every record ends at its last state, no VAT submission is accepted twice.
 * `npm run test:chaos` runs the long form (TAXSYNC_CHAOS_OUTAGE_S=30).
 */
const EVENTS = chaosEvents(300);
const OUTAGE_S = Number(process.env.TAXSYNC_CHAOS_OUTAGE_S ?? 8);
const SETTLE_MS = Math.max(90_000, EVENTS * 30 + OUTAGE_S * 1000);
/** A webhook's longest wait for a 503 while Redis is away (the producer's command timeout, and then some on a busy machine). */
const PROMPT_MS = 5_000;

describe('Redis unreachable while webhooks come and workers send', () => {
  const rig = useChaosRig();

  it('answers 503 (never 202 unstored) while it is away, and the same process resumes by itself when it is back', async () => {
    const redis = await rig.redis();
    const workload = new Workload('GONE', EVENTS);
    const running = await rig.emulator({ requestLogLimit: EVENTS * 10 });
    const prefix = uniquePrefix();
    const httpPort = await freePort();
    const base = `http://127.0.0.1:${httpPort}`;
    const daemon = rig.spawn(['start'], { ...rig.env(redis.url, prefix, running.url), TAXSYNC_HTTP_PORT: String(httpPort) });
    await daemon.waitFor('taxsync is running');
    const pid = daemon.child.pid;

    // Deliveries keep coming through the outage; a 503 is retried, a 202 means stored.
    const fed = feed({
      url: () => base,
      events: workload.events,
      deadlineMs: SETTLE_MS,
      spreadOverMs: OUTAGE_S * 1000 + 8_000,
      retry: (s) => s === 503,
    });

    // The outage, once a third is stored and the workers are sending.
    await eventually(() => fed.stored() >= fed.batches / 3 && upserts(running).some((e) => e.outcome === 'in_flight'), SETTLE_MS);
    const stoppedAt = Date.now();
    redis.server().child.kill('SIGSTOP');
    const ready: { status: number; ms: number }[] = [];
    while (Date.now() - stoppedAt < OUTAGE_S * 1000) {
      const asked = Date.now();
      // Bounded, so a hanging /readyz fails the test instead of stalling it.
      const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(OUTAGE_S * 1000 + 10_000) }).catch(() => undefined);
      ready.push({ status: res?.status ?? 0, ms: Date.now() - asked });
      await new Promise((r) => setTimeout(r, 500));
    }
    const upsertsAtResume = upserts(running).length;
    const resumedAt = Date.now();
    redis.server().child.kill('SIGCONT');

    await fed.done;
    await workload.settled(running, SETTLE_MS, () => daemon.output().slice(-4_000));
    await workload.expectStored(redis.connect(), prefix, fed.acknowledged());

    // While Redis was away (after two seconds for what it had already taken), no delivery was
    // acknowledged, and those that came were refused with a 503 promptly, not held until it was back.
    const answeredDuring = fed.posts.filter((p) => p.answeredAt > stoppedAt + 2_000 && p.answeredAt < resumedAt);
    expect(answeredDuring.length).toBeGreaterThan(0);
    for (const p of answeredDuring) expect(p.status, p.body).toBe(503);
    const startedEarly = fed.posts.filter((p) => p.startedAt >= stoppedAt + 1_000 && p.startedAt <= resumedAt - PROMPT_MS);
    expect(startedEarly.length).toBeGreaterThan(0);
    for (const p of startedEarly) {
      expect(p.status, p.body).toBe(503);
      expect(p.answeredAt - p.startedAt).toBeLessThan(PROMPT_MS);
    }
    const readyDuring = ready.filter((r, i) => i > 0 && r.ms < OUTAGE_S * 1000);
    expect(readyDuring.length).toBeGreaterThan(0);
    for (const r of readyDuring) expect(r.status).toBe(503);

    // A refused delivery only around the outage; after it, the same process took them again.
    for (const p of fed.posts.filter((x) => x.status !== 202 && x.status !== 200)) {
      expect(p.answeredAt, `${p.status} ${p.body}`).toBeGreaterThanOrEqual(stoppedAt);
    }
    expect(fed.posts.some((p) => p.status === 202 && p.startedAt > resumedAt)).toBe(true);
    expect(upserts(running).length).toBeGreaterThan(upsertsAtResume);
    expect(daemon.child.pid).toBe(pid);
    expect(daemon.child.exitCode, daemon.output()).toBeNull();
    expect(daemon.child.signalCode).toBeNull();
    console.info(
      `chaos (Redis unreachable): ${workload.events.length} events in ${fed.batches} batches, ${workload.records} records, redis stopped ${resumedAt - stoppedAt} ms; ` +
        `${fed.posts.filter((p) => p.status === 503).length} deliveries answered 503 and retried, ${answeredDuring.length} of them during the outage; ` +
        `/readyz ${ready.map((r) => `${r.status} in ${r.ms} ms`).join(', ')}; ${upserts(running).length} upserts`,
    );
  }, 2 * SETTLE_MS + 60_000);
});
