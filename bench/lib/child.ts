import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { childProfileArgs } from './profile.js';

export interface NodeChild {
  pid: number;
  /** Resident set size now, in bytes (from /proc). */
  rss(): number;
  /**
   * CPU time used so far (user + system), in ms, from /proc. Unlike wall time it barely depends
   * on what else the machine is doing, so it compares the two sides fairly on a busy machine.
   */
  cpuMs(): number;
  /** SIGTERM, then SIGKILL after 10 s. */
  stop(): Promise<void>;
  /** What it wrote to stderr (for errors). */
  stderr(): string;
}

/**
 * Starts `node <script> …args` with `env` added, and waits until `ready()` says so. `label` names
 * its CPU profile when BENCH_CPU_PROFILE is set.
 */
export async function startNode(script: string, args: readonly string[], env: Record<string, string>, ready: () => Promise<boolean>, label: string): Promise<NodeChild> {
  const child: ChildProcess = spawn(process.execPath, [...childProfileArgs(label), script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err = (err + chunk.toString('utf8')).slice(-8_000);
  });
  const until = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}: ${err}`);
    if (await ready().catch(() => false)) break;
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`${script} was not ready within 30 s: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    pid: child.pid!,
    rss() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    },
    cpuMs() {
      // Fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 per second on Linux).
      const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    stderr: () => err,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** True once GET url answers (any status). */
export function answers(url: string): () => Promise<boolean> {
  return async () => {
    const res = await fetch(url);
    await res.arrayBuffer();
    return true;
  };
}

/** Where the compiled CLI is (dist/src/cli/main.js), next to dist/bench. */
export const CLI = new URL('../../src/cli/main.js', import.meta.url).pathname;
/** A compiled bare-minimum script of bench/bare/. */
export const bare = (name: string): string => new URL(`../bare/${name}.js`, import.meta.url).pathname;
