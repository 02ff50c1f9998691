/**
 * `node dist/bench/heap-summary.js <file.heapprofile> [top] [per]`: what allocated the bytes of a
 * sampling heap profile (BENCH_HEAP_PROFILE), in text — by area (as profile-summary's), by
 * function, and by the nearest function of taxsync's own on the stack (`src/…`: whose work the
 * allocation was, whatever library made it). `per` divides the totals (e.g. the events drained)
 * to print bytes per event.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { area } from './lib/profile-area.js';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const Node: z.ZodType<HeapNode> = z.lazy(() =>
  z.object({
    callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
    selfSize: z.number(),
    children: z.array(Node),
  }),
);
const Profile = z.object({ head: Node });

function label(frame: HeapNode['callFrame']): string {
  const file = frame.url.replace(/^.*\/(dist|node_modules)\//, '');
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
}

function add(map: Map<string, number>, key: string, bytes: number): void {
  map.set(key, (map.get(key) ?? 0) + bytes);
}

function main(): void {
  const [file, topArg, perArg] = process.argv.slice(2);
  if (!file) throw new Error('usage: heap-summary <file.heapprofile> [top] [per]');
  const top = Number(topArg ?? 25);
  const per = Number(perArg ?? 1);
  const { head } = Profile.parse(JSON.parse(readFileSync(file, 'utf8')));
  const areas = new Map<string, number>();
  const fns = new Map<string, number>();
  const owners = new Map<string, number>();
  let total = 0;
  // Iterative walk: a deep async stack would overflow a recursive one.
  const stack: { node: HeapNode; owner: string }[] = [{ node: head, owner: '(no taxsync frame)' }];
  while (stack.length > 0) {
    const { node, owner: above } = stack.pop()!;
    const own = /\/dist\/src\//.test(node.callFrame.url) ? label(node.callFrame) : above;
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(areas, area(node.callFrame.url, node.callFrame.functionName), node.selfSize);
      add(fns, label(node.callFrame), node.selfSize);
      add(owners, own, node.selfSize);
    }
    for (const child of node.children) stack.push({ node: child, owner: own });
  }
  const print = (title: string, map: Map<string, number>): void => {
    console.log(`\n${title}`);
    for (const [key, bytes] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      console.log(`${((100 * bytes) / total).toFixed(1).padStart(5)}%  ${Math.round(bytes / per).toLocaleString('en').padStart(12)} B  ${key}`);
    }
  };
  console.log(`allocated (sampled): ${Math.round(total / per).toLocaleString('en')} bytes${per === 1 ? '' : ` per unit (÷ ${per})`}`);
  print('by area (self)', areas);
  print('by function (self)', fns);
  print('by the nearest taxsync function on the stack', owners);
}

main();
