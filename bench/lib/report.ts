export interface ScenarioResult {
  id: string;
  name: string;
  metric: string;
  taxsync: number;
  baseline: number;
  /** taxsync ÷ baseline, or as the scenario defines it (see `ratioMeaning`). */
  ratio: number;
  ratioMeaning: string;
  target: string;
  pass: boolean;
  details: Record<string, unknown>;
}

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

export function table(results: readonly ScenarioResult[]): string {
  const rows = [
    ['scenario', 'metric', 'taxsync', 'baseline', 'ratio', 'target', 'pass'],
    ...results.map((r) => [`${r.id} ${r.name}`, r.metric, String(round(r.taxsync)), String(round(r.baseline)), String(round(r.ratio, 3)), r.target, r.pass ? 'yes' : 'NO']),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.slice(1).map(line)].join('\n');
}

export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return n;
}
