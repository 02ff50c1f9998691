/** Server-rendered pages: every interpolated value is escaped unless it is already `Html`. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Markup that is already safe. */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false || part === true) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return (part as readonly Part[]).map(render).join('');
  return escapeHtml(String(part));
}

/** A template literal whose values are escaped (arrays are joined, `false`/`null`/`undefined` vanish). */
export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#222}
header{background:#243447;color:#fff;padding:.5rem 1rem;display:flex;gap:1rem;align-items:center}
header a{color:#fff}header form{margin-left:auto}
main{padding:1rem}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left;vertical-align:top}
pre{background:#f5f5f5;padding:.5rem;overflow:auto;max-height:30rem;white-space:pre-wrap;word-break:break-all}
form.filters{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin-bottom:1rem}
label{display:flex;flex-direction:column;font-size:12px}
.error{color:#a40000}.notice{background:#fff7d6;padding:.5rem}
dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem}dt{font-weight:bold}
`;

export interface PageOptions {
  /** Shown in the header when the viewer is signed in, with a sign-out button. */
  actor?: string;
  /** The CSRF token for the sign-out form (cookie sessions only). */
  csrf?: string;
}

/** The whole document. */
export function page(title: string, body: Html, options: PageOptions = {}): string {
  const nav =
    options.actor === undefined
      ? html``
      : html`<a href="/admin/dead-letters">Dead letters</a><a href="/admin/queues">Queues</a><span>${options.actor}</span>
          ${options.csrf === undefined
            ? ''
            : html`<form method="post" action="/admin/logout"><input type="hidden" name="csrf" value="${options.csrf}"><button>Sign out</button></form>`}`;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title} · taxsync</title><meta name="viewport" content="width=device-width">
<style>${new Html(STYLE)}</style></head>
<body><header><strong>taxsync admin</strong>${nav}</header><main><h1>${title}</h1>${body}</main></body></html>`.value;
}
