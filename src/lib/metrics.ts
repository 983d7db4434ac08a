/** A small Prometheus registry (text format 0.0.4); no globals, so tests get their own. */
type Labels = Record<string, string>;

type Series = { labels: Labels; value: number };
/** `counts[i]` is observations in (buckets[i-1], buckets[i]]: one increment per observation; cumulated when rendered. */
type HistSeries = { labels: Labels; counts: number[]; sum: number; count: number };

type Family =
  | { kind: 'counter' | 'gauge'; name: string; help: string; series: Map<string, Series> }
  | { kind: 'histogram'; name: string; help: string; buckets: number[]; series: Map<string, HistSeries> };

/** Series key: labels in name order. Callers usually pass them sorted already; then no sort. */
const key = (labels: Labels) => {
  let names = Object.keys(labels);
  for (let i = 1; i < names.length; i++)
    if (names[i - 1]! > names[i]!) {
      names = names.sort();
      break;
    }
  let out = '';
  for (let i = 0; i < names.length; i++) out += (i ? ',' : '') + names[i] + '=' + labels[names[i]!];
  return out;
};
const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const fmtLabels = (labels: Labels, extra?: [string, string]) => {
  const parts = Object.keys(labels)
    .sort()
    .map((k) => `${k}="${esc(labels[k]!)}"`);
  if (extra) parts.push(`${extra[0]}="${esc(extra[1])}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
};
const num = (n: number) => (Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN');

export function createMetrics() {
  const families = new Map<string, Family>();
  const collectors: (() => void)[] = [];

  /** A name registered again is the family registered first. */
  function family<F extends Family>(f: F): F {
    if (!families.has(f.name)) families.set(f.name, f);
    return families.get(f.name) as F;
  }

  const scalar = (kind: 'counter' | 'gauge', name: string, help: string) =>
    family({ kind, name, help, series: new Map<string, Series>() }).series;

  return {
    counter(name: string, help: string) {
      const series = scalar('counter', name, help);
      return {
        inc(labels: Labels = {}, by = 1) {
          const k = key(labels);
          const s = series.get(k) ?? { labels, value: 0 };
          s.value += by;
          series.set(k, s);
        },
      };
    },
    gauge(name: string, help: string) {
      const series = scalar('gauge', name, help);
      return {
        set(value: number, labels: Labels = {}) {
          series.set(key(labels), { labels, value });
        },
      };
    },
    histogram(name: string, help: string, buckets: number[]) {
      const f = family({
        kind: 'histogram' as const,
        name,
        help,
        buckets: [...buckets].sort((a, b) => a - b),
        series: new Map<string, HistSeries>(),
      });
      const seriesFor = (labels: Labels): HistSeries => {
        const k = key(labels);
        let s = f.series.get(k);
        if (!s) {
          s = { labels, counts: f.buckets.map(() => 0), sum: 0, count: 0 };
          f.series.set(k, s);
        }
        return s;
      };
      const record = (s: HistSeries, value: number) => {
        let i = 0;
        while (i < f.buckets.length && value > f.buckets[i]!) i++;
        if (i < f.buckets.length) s.counts[i]!++;
        s.sum += value;
        s.count++;
      };
      return {
        observe(value: number, labels: Labels = {}) {
          record(seriesFor(labels), value);
        },
        /** The series for fixed labels, for a hot path that observes it often: no key built per call. */
        series(labels: Labels) {
          const s = seriesFor(labels);
          return { observe: (value: number) => record(s, value) };
        },
      };
    },
    collect(fn: () => void) {
      collectors.push(fn);
    },
    render(): string {
      for (const fn of collectors) {
        try {
          fn();
        } catch {
          /* a failing collector must not break the scrape */
        }
      }
      const out: string[] = [];
      for (const f of families.values()) {
        out.push(`# HELP ${f.name} ${f.help.replace(/\n/g, ' ')}`, `# TYPE ${f.name} ${f.kind}`);
        if (f.kind === 'histogram') {
          for (const s of f.series.values()) {
            let cumulative = 0;
            for (const [i, b] of f.buckets.entries()) {
              cumulative += s.counts[i]!;
              out.push(`${f.name}_bucket${fmtLabels(s.labels, ['le', num(b)])} ${cumulative}`);
            }
            out.push(`${f.name}_bucket${fmtLabels(s.labels, ['le', '+Inf'])} ${s.count}`);
            out.push(
              `${f.name}_sum${fmtLabels(s.labels)} ${num(s.sum)}`,
              `${f.name}_count${fmtLabels(s.labels)} ${s.count}`,
            );
          }
        } else {
          for (const s of f.series.values()) out.push(`${f.name}${fmtLabels(s.labels)} ${num(s.value)}`);
        }
      }
      return out.join('\n') + '\n';
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
