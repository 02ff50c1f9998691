import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');

/** `docker compose` (the plugin) or Debian's `docker-compose`, whichever this machine has. */
function composeCommand(): string[] | undefined {
  for (const command of [['docker', 'compose'], ['docker-compose']]) {
    const probe = spawnSync(command[0]!, [...command.slice(1), 'version'], { encoding: 'utf8' });
    if (probe.status === 0) return command;
  }
  return undefined;
}

describe('shipping', () => {
  it('builds the image in stages and runs it as a non-root user with a health check on /healthz', () => {
    const dockerfile = read('Dockerfile');
    const stages = dockerfile.match(/^FROM /gm) ?? [];
    expect(stages.length).toBeGreaterThanOrEqual(2);
    // The runtime stage (the last) is what ships.
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const user = /^USER\s+(\S+)/m.exec(runtime)?.[1];
    expect(user, 'the runtime stage sets a USER').toBeDefined();
    expect(['root', '0']).not.toContain(user);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["node", "dist\//m);
    expect(runtime).not.toMatch(/COPY --from=build \/app\/src/);
  });

  // CI (.ci/run) installs Debian's docker-compose, so this runs there; a machine without any
  // compose tool skips it and says so.
  const compose = composeCommand();
  it.skipIf(compose === undefined)('docker-compose.yml validates, with Redis persistent and never evicting', () => {
    const [command, ...args] = compose!;
    const result = spawnSync(command!, [...args, '-f', 'docker-compose.yml', 'config'], { cwd: root, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    const config = result.stdout;
    expect(config).toMatch(/appendonly[\s\S]{0,20}yes/);
    expect(config).toMatch(/maxmemory-policy[\s\S]{0,20}noeviction/);
    expect(config).toMatch(/TAXSYNC_ALLOW_INSECURE_HTTP: '?"?1/);
  });
  if (compose === undefined) console.warn('shipping test: no docker compose / docker-compose here; compose validation skipped');
});
