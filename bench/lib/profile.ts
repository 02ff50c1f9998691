import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

/**
 * Runs `fn`, and with BENCH_CPU_PROFILE=<dir> writes a CPU profile of just that span to
 * <dir>/<label>.cpuprofile (open it in Chrome DevTools or speedscope); with BENCH_HEAP_PROFILE=<dir>
 * a sampling heap profile of the same span to <dir>/<label>.heapprofile (what allocated the bytes
 * the garbage collector then spends its time on). Profiling only the timed span keeps the fill and
 * the other side out of the picture.
 */
export async function profiled<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const cpuDir = process.env.BENCH_CPU_PROFILE;
  const heapDir = process.env.BENCH_HEAP_PROFILE;
  if (!cpuDir && !heapDir) return fn();
  const session = new Session();
  session.connect();
  if (cpuDir) {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  if (heapDir) {
    await session.post('HeapProfiler.enable');
    // Every 8 KiB allocated on average; objects collected meanwhile are kept in the profile, so it
    // shows all allocation, not only what survived.
    // (V8 knows the two flags; @types/node's protocol types predate them.)
    const sampling = { samplingInterval: 8192, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
    await session.post('HeapProfiler.startSampling', sampling);
  }
  try {
    return await fn();
  } finally {
    if (cpuDir) {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(cpuDir, { recursive: true });
      writeFileSync(join(cpuDir, `${label}.cpuprofile`), JSON.stringify(profile));
    }
    if (heapDir) {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      mkdirSync(heapDir, { recursive: true });
      writeFileSync(join(heapDir, `${label}.heapprofile`), JSON.stringify(profile));
    }
    session.disconnect();
  }
}

/** With BENCH_CPU_PROFILE set, the node flags that make a child process write its own profile on exit. */
export function childProfileArgs(label: string): string[] {
  const dir = process.env.BENCH_CPU_PROFILE;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${label}.cpuprofile`] : [];
}
