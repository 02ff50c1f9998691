/** Which part of the process a script belongs to. */
export function area(url: string, name: string): string {
  if (url === '') return name === '(garbage collector)' ? 'GC' : name === '(idle)' ? 'idle' : name === '(program)' ? 'program (native)' : `native ${name}`;
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dep) return dep[1]!;
  const own = /\/dist\/(src\/[^/]+|bench)\//.exec(url);
  if (own) return own[1]!;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url;
}
