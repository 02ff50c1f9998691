import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// Not dist/: the tests never overwrite a build someone else is running. Under node_modules, so
// the packages resolve; its own package.json makes the output ESM.
const OUT_DIR = join(ROOT, 'node_modules', '.cache', 'taxsync-e2e');
const LOCK = `${OUT_DIR}.lock`;
const MAIN = join(OUT_DIR, 'src', 'cli', 'main.js');

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** Whether the process that took the lock is gone (a test run killed mid-build). */
function lockAbandoned(): boolean {
  try {
    const pid = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // No pid file yet: just taken, unless it has been like that for a while.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Date.now() - statSync(LOCK).mtimeMs > 10_000;
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Holds a lock directory (mkdir is atomic) while `fn` runs. */
async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      break;
    } catch {
      try {
        if (lockAbandoned()) rmSync(LOCK, { recursive: true, force: true });
      } catch {
        // Released meanwhile.
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/**
 * Builds the `taxsync` CLI with tsc (incremental: a second build with no change is quick) and
 * answers the path of its main.js. Test files running at once share one build through a lock.
 */
export async function buildCli(): Promise<string> {
  return withLock(async () => {
    mkdirSync(OUT_DIR, { recursive: true });
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const args = ['-p', 'tsconfig.build.json', '--outDir', OUT_DIR, '--incremental', '--tsBuildInfoFile', join(OUT_DIR, 'tsbuildinfo.json')];
    const { code, output } = await run(process.execPath, [tsc, ...args]);
    if (code !== 0) throw new Error(`tsc failed (exit ${code}):\n${output}`);
    writeFileSync(join(OUT_DIR, 'package.json'), '{ "type": "module" }\n');
    return MAIN;
  });
}

export interface CliProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once the output contains `text` (rejects if the process exits first or after `deadlineMs`). */
  waitFor(text: string | RegExp, deadlineMs?: number): Promise<string>;
  /** Kills the process (SIGKILL) when it is still running, and waits for it. */
  kill(): Promise<void>;
}

/** Runs the built CLI with exactly `env` (plus PATH), never the test process's environment. */
export function spawnCli(main: string, args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, [main, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  return {
    child,
    output: () => output,
    exited,
    async waitFor(text, deadlineMs = 20_000) {
      const until = Date.now() + deadlineMs;
      for (;;) {
        const match = typeof text === 'string' ? output.includes(text) : text.test(output);
        if (match) return output;
        if (done) throw new Error(`taxsync ${args.join(' ')} exited before printing ${String(text)}:\n${output}`);
        if (Date.now() > until) throw new Error(`taxsync ${args.join(' ')} did not print ${String(text)} in time:\n${output}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async kill() {
      if (!done) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** Runs the built CLI to its end: its exit code, its stdout alone, and stdout with stderr. */
export async function runCli(main: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; output: string }> {
  const run = spawnCli(main, args, env);
  let stdout = '';
  run.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  const { code } = await run.exited;
  return { code, stdout, output: run.output() };
}
