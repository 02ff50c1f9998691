import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';

/**
 * Runs `fn`, and with BENCH_CPU_PROFILE=<dir> writes a CPU profile of just that span to
 * <dir>/<label>.cpuprofile (open it in Chrome DevTools or speedscope). Profiling only the timed
 * span keeps the fill and the other side out of the picture.
 */
export async function profiled<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${label}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}


/** With BENCH_CPU_PROFILE set, the node flags that make a child process write its own profile on exit. */
export function childProfileArgs(label: string): string[] {
  const dir = process.env.BENCH_CPU_PROFILE;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${label}.cpuprofile`] : [];
}
