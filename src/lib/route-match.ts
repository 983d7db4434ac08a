import type { RouteDoc } from './route-doc.ts';

type Entry = { pattern: string; methods: string[] };

/** Route matching outside Hono's router, for the 405 methods and the metric label in the fetch wrapper. */
export function routeTable(docs: RouteDoc[]) {
  const byPath = new Map<string, Entry>();
  for (const d of docs) {
    const pattern = d.path.replace(/\{([^}]+)\}/g, ':$1');
    const entry = byPath.get(pattern) ?? { pattern, methods: [] };
    const method = d.method.toUpperCase();
    for (const m of method === 'GET' ? ['GET', 'HEAD'] : [method])
      if (!entry.methods.includes(m)) entry.methods.push(m);
    byPath.set(pattern, entry);
  }
  // Literal paths (nearly every request) are one map lookup; only parameterised ones need a regex.
  const exact = new Map<string, Entry>();
  const dynamic: { re: RegExp; entry: Entry }[] = [];
  for (const entry of byPath.values()) {
    if (!entry.pattern.includes(':')) {
      exact.set(entry.pattern, entry);
      if (entry.pattern !== '/') exact.set(entry.pattern + '/', entry);
      continue;
    }
    const source = entry.pattern
      .split('/')
      .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&')))
      .join('/');
    dynamic.push({ re: new RegExp(`^${source}/?$`), entry });
  }
  const find = (path: string): Entry | undefined => exact.get(path) ?? dynamic.find((d) => d.re.test(path))?.entry;
  return {
    /** Methods documented for the path (GET implies HEAD); empty when no route matches. */
    allowed: (path: string): string[] => find(path)?.methods ?? [],
    /** The pattern (`/v1/cities/:slug`) or `unmatched`: a bounded label set whatever clients send. */
    label: (path: string): string => find(path)?.pattern ?? 'unmatched',
  };
}

export type RouteTable = ReturnType<typeof routeTable>;

/** The path of an absolute request URL, without query or fragment. */
export function pathOf(url: string): string {
  const scheme = url.indexOf('://');
  const start = url.indexOf('/', scheme < 0 ? 0 : scheme + 3);
  return start < 0 ? '/' : /^[^?#]*/.exec(url.slice(start))![0];
}
