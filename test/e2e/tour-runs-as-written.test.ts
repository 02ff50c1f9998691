import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/daemon/redis-probe.js';
import { buildCli } from '../helpers/cli.js';

/**
 * docs/tour.md, run as a newcomer would type it: every fenced block after a `<!-- tour: … -->`
 * marker, in order, in one folder of its own, with `npm` and `npx` standing for this checkout's
 * scripts and CLI (built by buildCli). Nothing else is configured: no REDIS_URL, no TAX_API_URL,
 * so the daemon starts its own redis-server and emulator, and every other command must find
 * them through .taxsync/daemon.json. The doc cannot drift from what works.
 *
 * Markers: `daemon, expect "…"` (run in the background until it prints that), `run` (exit 0),
 * `expect "…"` or `expect /…/` (the output holds it), `retry until "…"` (run again until it
 * does: a worker may not have got there yet), `exit <n>` (that exit code), `ctrl-c` (SIGINT to
 * the daemon, as the first terminal's Ctrl-C).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TOUR = join(ROOT, 'docs', 'tour.md');

interface Step {
  line: number;
  marker: string;
  script: string | undefined;
}

/** Every marker of the tour with the fenced block right after it (none for ctrl-c). */
export function tourSteps(text: string): Step[] {
  const steps: Step[] = [];
  const pattern = /<!--\s*tour:\s*(.*?)\s*-->\n(?:```sh\n([\s\S]*?)\n```)?/g;
  for (const match of text.matchAll(pattern)) {
    steps.push({ line: text.slice(0, match.index).split('\n').length, marker: match[1]!, script: match[2] });
  }
  return steps;
}

type Expectation = { text: string } | { pattern: RegExp };

function expectation(marker: string, key: 'expect' | 'retry until'): Expectation | undefined {
  const match = new RegExp(`${key} (?:"([^"]*)"|/(.*)/)`).exec(marker);
  if (!match) return undefined;
  return match[1] !== undefined ? { text: match[1] } : { pattern: new RegExp(match[2]!) };
}

const holds = (output: string, e: Expectation) => ('text' in e ? output.includes(e.text) : e.pattern.test(output));

/** `npm` and `npx` for the tour: the package.json scripts with this checkout's built CLI. */
function writeShims(bin: string, main: string): void {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  // The build already happened (buildCli); the rest of each script runs as written.
  const script = (name: string) => {
    const text = scripts[name]!.replace(/^npm run build && /, '');
    expect(text, `package.json script ${name}`).toMatch(/^node dist\/src\/cli\/main\.js /);
    return text.replace(/^node dist\/src\/cli\/main\.js/, `exec node "${main}"`);
  };
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, 'npm'),
    [
      '#!/bin/sh',
      'case "$*" in',
      '  ci) exit 0 ;;',
      `  start) ${script('start')} ;;`,
      `  "run demo") ${script('demo')} ;;`,
      '  *) echo "tour test: npm $* is not part of the tour" >&2; exit 97 ;;',
      'esac',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(bin, 'npx'),
    ['#!/bin/sh', `if [ "$1" = taxsync ]; then shift; exec node "${main}" "$@"; fi`, 'echo "tour test: npx $* is not part of the tour" >&2', 'exit 97', ''].join('\n'),
  );
  chmodSync(join(bin, 'npm'), 0o755);
  chmodSync(join(bin, 'npx'), 0o755);
}

interface Ran {
  code: number | null;
  output: string;
}

describe('docs/tour.md', () => {
  let dir: string;
  let main: string;
  let env: Record<string, string>;
  let daemon: ChildProcess | undefined;
  let daemonOutput = '';
  const variables = new Set<string>();

  beforeAll(async () => {
    main = await buildCli();
    dir = mkdtempSync(join(tmpdir(), 'taxsync-tour-'));
    writeShims(join(dir, '.bin'), main);
    env = { PATH: `${join(dir, '.bin')}:${process.env.PATH ?? ''}`, HOME: dir };
  }, 180_000);

  afterAll(async () => {
    if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
      // The daemon and its redis-server are in one process group.
      process.kill(-daemon.pid!, 'SIGKILL');
      await new Promise((r) => daemon!.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** One block in bash, with the variables earlier blocks set (as one shell session keeps them). */
  function bash(script: string, deadlineMs: number): Promise<Ran> {
    for (const [, name] of script.matchAll(/^([A-Z][A-Z0-9_]*)=/gm)) variables.add(name!);
    const state = join(dir, '.tour-state');
    const save = variables.size === 0 ? '' : `\ndeclare -p ${[...variables].join(' ')} > ${JSON.stringify(state)} 2>/dev/null || true`;
    const full = `set -eo pipefail\n[ -f ${JSON.stringify(state)} ] && . ${JSON.stringify(state)}\n${script}${save}\n`;
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', full], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`timed out after ${deadlineMs} ms:\n${script}\n${output}`));
      }, deadlineMs);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
  }

  async function startDaemon(step: Step): Promise<void> {
    const wanted = expectation(step.marker, 'expect') ?? { text: 'taxsync is running' };
    // A free port and loopback only: the tour's 8080 may be taken, and a test listens on nothing else.
    const port = String(await freePort());
    daemon = spawn('bash', ['-c', step.script!], {
      cwd: dir,
      env: { ...env, TAXSYNC_HTTP_PORT: port, TAXSYNC_HTTP_HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    daemon.stdout!.on('data', (d: Buffer) => (daemonOutput += d.toString()));
    daemon.stderr!.on('data', (d: Buffer) => (daemonOutput += d.toString()));
    const until = Date.now() + 60_000;
    while (!holds(daemonOutput, wanted)) {
      if (daemon.exitCode !== null) throw new Error(`the daemon exited (${daemon.exitCode}):\n${daemonOutput}`);
      if (Date.now() > until) throw new Error(`the daemon did not print ${JSON.stringify(wanted)}:\n${daemonOutput}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function ctrlC(): Promise<void> {
    expect(daemon, 'ctrl-c before the daemon started').toBeDefined();
    const exited = new Promise<number | null>((r) => daemon!.once('exit', (code) => r(code)));
    process.kill(-daemon!.pid!, 'SIGINT');
    const code = await Promise.race([exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 40_000))]);
    expect(code, `the daemon did not stop on Ctrl-C:\n${daemonOutput}`).toBe(0);
  }

  async function run(step: Step): Promise<void> {
    const where = `docs/tour.md line ${step.line}`;
    const wantedExit = Number(/exit (\d+)/.exec(step.marker)?.[1] ?? 0);
    const wanted = expectation(step.marker, 'expect');
    const retryUntil = expectation(step.marker, 'retry until');
    const until = Date.now() + 30_000;
    for (;;) {
      const ran = await bash(step.script!, 90_000);
      const seen = `${where}: exit ${ran.code}\n${ran.output}\n--- daemon ---\n${daemonOutput.slice(-4000)}`;
      if (retryUntil && !holds(ran.output, retryUntil) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      expect(ran.code, seen).toBe(wantedExit);
      if (retryUntil) expect(holds(ran.output, retryUntil), seen).toBe(true);
      if (wanted) expect(holds(ran.output, wanted), seen).toBe(true);
      return;
    }
  }

  it('runs every marked block as written: start, demo, two shops traced, status, trace, a dead letter replayed, a VAT return reconciled, stop', async () => {
    const steps = tourSteps(readFileSync(TOUR, 'utf8'));
    // The tour covers what it promises; a marker lost in an edit would silently skip a step.
    const kinds = steps.map((s) => s.marker.split(/[ ,]/)[0]);
    expect(kinds.filter((k) => k === 'daemon')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'ctrl-c')).toHaveLength(1);
    const all = steps.map((s) => s.script ?? '').join('\n');
    for (const command of ['npm run demo', 'npx taxsync trace woocommerce-fr', 'npx taxsync status', 'npx taxsync trace', 'npx taxsync faults add', 'npx taxsync dlq list', 'npx taxsync dlq replay', 'npx taxsync vat filings create', 'npx taxsync vat reconcile']) {
      expect(all, command).toContain(command);
    }

    for (const step of steps) {
      const kind = step.marker.split(/[ ,]/)[0];
      if (kind === 'daemon') await startDaemon(step);
      else if (kind === 'ctrl-c') await ctrlC();
      else if (kind === 'run') await run(step);
      else throw new Error(`docs/tour.md line ${step.line}: unknown tour marker ${JSON.stringify(step.marker)}`);
    }
    // A clean stop leaves no note of a daemon behind, and nothing else started a redis-server.
    expect(existsSync(join(dir, '.taxsync', 'daemon.json'))).toBe(false);
  }, 600_000);
});
