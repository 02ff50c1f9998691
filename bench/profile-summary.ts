/**
 * `node dist/bench/profile-summary.js <file.cpuprofile> [top] [skipMs]`: a flame summary in text —
 * self time by area (taxsync's folders, each dependency, Node internals, GC, idle) and the heaviest
 * functions, in shares and in ms — the tables in docs/performance.md are made with it. `skipMs`
 * leaves out the first milliseconds of the profile: a child process's start (loading modules)
 * is a large part of a short run's profile and none of its per-request cost.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { area } from './lib/profile-area.js';

const Profile = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
      hitCount: z.number().optional(),
    }),
  ),
  samples: z.array(z.number()).optional(),
  timeDeltas: z.array(z.number()).optional(),
});

function main(): void {
  const [file, topArg, skipArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: profile-summary <file.cpuprofile> [top] [skipMs]');
  const skipUs = Number(skipArg ?? 0) * 1000;
  const profile = Profile.parse(JSON.parse(readFileSync(file, 'utf8')));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  if (profile.samples && profile.timeDeltas) {
    let at = 0;
    profile.samples.forEach((id, i) => {
      const delta = profile.timeDeltas![i] ?? 0;
      at += delta;
      if (at >= skipUs) self.set(id, (self.get(id) ?? 0) + delta);
    });
  } else for (const n of profile.nodes) self.set(n.id, n.hitCount ?? 0);
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, t] of self) {
    const node = byId.get(id)!;
    const a = area(node.callFrame.url, node.callFrame.functionName);
    if (a === 'idle') {
      idle += t;
      continue;
    }
    total += t;
    areas.set(a, (areas.get(a) ?? 0) + t);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/.*\/(node_modules|dist)\//, '')}:${node.callFrame.lineNumber + 1}`;
    fns.set(fn, (fns.get(fn) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / total).toFixed(1)}%`.padStart(6) + `${(t / 1000).toFixed(0)} ms`.padStart(9);
  const top = Number(topArg ?? 15);
  console.log(`${file}: ${(total / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle${skipUs > 0 ? ` (after the first ${skipUs / 1000} ms)` : ''}`);
  console.log('self time by area:');
  for (const [a, t] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(t)}  ${a}`);
  console.log('heaviest functions (self):');
  for (const [f, t] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(t)}  ${f}`);
}

main();
