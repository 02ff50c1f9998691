import type { ChartInput } from '../../activity/reports-data.js';
import { html, type Html } from './html.js';


/**
 * PURE: a small line chart as inline SVG, rendered on the server (the admin pages allow no
 * scripts: their CSP is `default-src 'none'`). One line per series over hourly buckets; the y axis
 * starts at 0 and its top is the largest value.
 */



const W = 640;
const H = 200;
const PAD = { left: 40, right: 10, top: 10, bottom: 24 };
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];

const hourLabel = (ms: number) => new Date(ms).toISOString().slice(11, 16);

export function lineChart(input: ChartInput): Html {
  const n = input.buckets.length;
  const max = Math.max(1, ...input.series.flatMap((s) => s.values));
  const x = (i: number) => PAD.left + (n <= 1 ? 0 : (i * (W - PAD.left - PAD.right)) / (n - 1));
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  const every = Math.max(1, Math.ceil(n / 8));
  const ticks = input.buckets.map((b, i) => (i % every === 0 || i === n - 1 ? html`<text x="${x(i).toFixed(1)}" y="${H - 6}" font-size="10" text-anchor="middle">${hourLabel(b)}</text>` : ''));
  const lines = input.series.map((s, k) => {
    const colour = COLOURS[k % COLOURS.length]!;
    const points = s.values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    return html`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points}"><title>${s.name}</title></polyline>`;
  });
  const legend = input.series.map((s, k) => html`<span style="color:${COLOURS[k % COLOURS.length]};margin-right:1em">■ ${s.name} (${s.values.reduce((a, b) => a + b, 0)})</span>`);
  const empty = input.series.length === 0 ? html`<text x="${W / 2}" y="${H / 2}" text-anchor="middle" font-size="12">nothing in these hours</text>` : '';
  return html`<figure class="chart"><figcaption>${input.title}</figcaption>
<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${input.title}">
<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#999"/>
<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${H - PAD.bottom}" stroke="#999"/>
<text x="${PAD.left - 4}" y="${PAD.top + 8}" font-size="10" text-anchor="end">${max}</text>
<text x="${PAD.left - 4}" y="${H - PAD.bottom}" font-size="10" text-anchor="end">0</text>
${ticks}${lines}${empty}</svg><div>${legend}</div></figure>`;
}
