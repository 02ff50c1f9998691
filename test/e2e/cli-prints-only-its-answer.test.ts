import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/daemon/redis-probe.js';
import { buildCli } from '../helpers/cli.js';

/**
 * The zero-configuration daemon as a newcomer runs it (`taxsync start` in a folder, nothing set),
 * and the other commands run beside it in the same folder: they find it through
 * .taxsync/daemon.json, print only their answer on stdout and nothing on stderr unless asked, and
 * without a daemon say so in one line rather than starting a Redis or an emulator of their own.
 */

const NO_DAEMON = 'taxsync: no taxsync daemon is running here (start one with npm start), or set REDIS_URL / TAX_API_URL';
const STATUS_TABLE = [
  /^QUEUE +WAITING +ACTIVE +DELAYED +FAILED +OLDEST WAITING$/,
  /^customers +\d+ +\d+ +\d+ +\d+ +\S+$/,
  /^transactions +\d+ +\d+ +\d+ +\d+ +\S+$/,
  /^vat-submissions +\d+ +\d+ +\d+ +\d+ +\S+$/,
  /^$/,
  /^dead-letter: \d+ entr(y|ies)/,
  /^VAT ledger: \d+ unknown .*, \d+ unresolved .*, \d+ in flight, \d+ pending$/,
  /^tax variances: \d+ invoice\(s\)/,
  /^connections: no event accepted yet$/,
  /^$/,
  /^waiting: none$/,
];

function expectStatusTable(text: string): void {
  const lines = text.replace(/\r/g, '').replace(/\n$/, '').split('\n');
  expect(lines, text).toHaveLength(STATUS_TABLE.length);
  lines.forEach((line, i) => expect(line, text).toMatch(STATUS_TABLE[i]!));
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('the CLI beside a zero-configuration daemon', () => {
  let main: string;
  let dir: string;
  let empty: string;
  let daemon: ChildProcess | undefined;
  let daemonOutput = '';
  // Nothing configured: no REDIS_URL, no TAX_API_URL, no LOG_LEVEL.
  const env = () => ({ PATH: process.env.PATH ?? '', HOME: dir });

  function cli(args: string[], cwd = dir, extra: Record<string, string> = {}): Promise<Ran> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [main, ...args], { cwd, env: { ...env(), ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.once('exit', (code) => resolve({ code, stdout, stderr }));
    });
  }

  beforeAll(async () => {
    main = await buildCli();
    dir = mkdtempSync(join(tmpdir(), 'taxsync-cli-'));
    empty = mkdtempSync(join(tmpdir(), 'taxsync-cli-empty-'));
    const port = String(await freePort());
    daemon = spawn(process.execPath, [main, 'start'], {
      cwd: dir,
      env: { ...env(), TAXSYNC_HTTP_PORT: port, TAXSYNC_HTTP_HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    daemon.stdout!.on('data', (d: Buffer) => (daemonOutput += d.toString()));
    daemon.stderr!.on('data', (d: Buffer) => (daemonOutput += d.toString()));
    const until = Date.now() + 60_000;
    while (!daemonOutput.includes('taxsync is running')) {
      if (daemon.exitCode !== null) throw new Error(`taxsync start exited:\n${daemonOutput}`);
      if (Date.now() > until) throw new Error(`taxsync start did not come up:\n${daemonOutput}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 180_000);

  afterAll(async () => {
    if (daemon && daemon.exitCode === null) {
      daemon.kill('SIGKILL');
      await new Promise((r) => daemon!.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(empty, { recursive: true, force: true });
  });

  it('runs the VAT worker at zero configuration, and the daemon keeps its JSON logs on stdout', () => {
    expect(daemonOutput).toMatch(/"queues":\["customers","transactions","vat-submissions"\],"msg":"workers started"/);
    expect(daemonOutput).toMatch(/^VAT: seller in US, registered in DE \(registration [0-9a-f-]{36}, entity jurisdiction [0-9a-f-]{36}\)$/m);
  });

  it('prints the status table on stdout and nothing else, stderr empty, with stdout a pipe', async () => {
    const ran = await cli(['status']);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    expectStatusTable(ran.stdout);
    const json = await cli(['status', '--json']);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toMatchObject({ queues: { 'vat-submissions': { waiting: 0 } } });
  });

  it('prints only the status table in a terminal', async (context) => {
    if (spawnSync('script', ['--version']).status !== 0) {
      context.skip('no `script` (util-linux) to give the command a terminal');
      return;
    }
    // script(1) runs it on a pseudo-terminal: stdout and stderr both land on the screen.
    const ran = spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(main)} status`, '/dev/null'], {
      cwd: dir,
      env: env(),
      encoding: 'utf8',
    });
    expect(ran.status).toBe(0);
    expectStatusTable(ran.stdout);
  });

  it('logs to stderr, never stdout, when asked with --verbose', async () => {
    const ran = await cli(['status', '--verbose']);
    expectStatusTable(ran.stdout);
    expect(ran.stderr).toContain("REDIS_URL unset: using the running daemon's local redis-server");
  });

  it("reaches the daemon's emulator and Redis: a registration the daemon created, a trace of nothing", async () => {
    const registrations = await cli(['vat', 'registrations', 'list']);
    expect(registrations.stderr).toBe('');
    expect(registrations.stdout).toMatch(/^[0-9a-f-]{36} {2}DE +standard +active +ej [0-9a-f-]{36} {2}number DE123456789/);
    const trace = await cli(['trace', 'api', 'nothing-here']);
    expect(trace).toEqual({ code: 1, stdout: 'no record api/nothing-here is known\n', stderr: '' });
  });

  it('says in one line that no daemon runs in a folder without one, and starts nothing there', async () => {
    writeFileSync(join(empty, 'events.jsonl'), '');
    for (const args of [['status'], ['trace', 'api', 'x'], ['dlq', 'list'], ['vat', 'types'], ['vat', 'reconcile', '--period', '2025-Q1'], ['ingest', 'events.jsonl'], ['demo'], ['faults', 'list']]) {
      const ran = await cli(args, empty);
      expect({ args, ...ran }).toEqual({ args, code: 1, stdout: '', stderr: `${NO_DAEMON}\n` });
    }
    expect(readdirSync(empty)).toEqual(['events.jsonl']);
  });

  it('names a stale daemon file whose process is gone', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const stale = mkdtempSync(join(tmpdir(), 'taxsync-cli-stale-'));
    try {
      writeFileSync(
        join(stale, 'daemon.json'),
        JSON.stringify({ v: 1, pid: Number(gone), command: 'start', started_at: '2026-01-01T00:00:00Z', http_url: 'http://127.0.0.1:1', emulator_url: 'http://127.0.0.1:2' }),
      );
      const ran = await cli(['vat', 'types'], stale, { TAXSYNC_DATA_DIR: stale });
      expect(ran.code).toBe(1);
      expect(ran.stderr).toBe(`${NO_DAEMON} (the daemon that wrote ${stale}/daemon.json, pid ${gone}, is gone)\n`);
    } finally {
      rmSync(stale, { recursive: true, force: true });
    }
  });

  it('removes its daemon file when it stops cleanly, and the commands then say no daemon runs', async () => {
    expect(existsSync(join(dir, '.taxsync', 'daemon.json'))).toBe(true);
    const exited = new Promise<number | null>((r) => daemon!.once('exit', (code) => r(code)));
    daemon!.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(join(dir, '.taxsync', 'daemon.json'))).toBe(false);
    const ran = await cli(['vat', 'types']);
    expect(ran).toEqual({ code: 1, stdout: '', stderr: `${NO_DAEMON}\n` });
  });
});
