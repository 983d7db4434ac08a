/** A small Prometheus registry (text format 0.0.4); no globals, so tests get their own. */
type Labels = Record<string, string>;

type Series = { labels: Labels; value: number };
/** `counts[i]` is observations in (buckets[i-1], buckets[i]]: one increment per observation; cumulated when rendered. */
type HistSeries = { labels: Labels; counts: number[]; sum: number; count: number };

type Family =
  | { kind: 'counter' | 'gauge'; name: string; help: string; series: Map<string, Series> }
  | { kind: 'histogram'; name: string; help: string; buckets: number[]; series: Map<string, HistSeries> };

type Counter = { inc(labels?: Labels, by?: number): void };
type Gauge = { set(value: number, labels?: Labels): void };
type Histogram = {
  observe(value: number, labels?: Labels): void;
  /** The series for fixed labels, for a hot path that observes it often: no key built per call. */
  series(labels: Labels): { observe(value: number): void };
};

export type Metrics = {
  counter(name: string, help: string): Counter;
  gauge(name: string, help: string): Gauge;
  histogram(name: string, help: string, buckets: number[]): Histogram;
  collect(fn: () => void): void;
  render(): string;
};

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

export function createMetrics(): Metrics {
  const families = new Map<string, Family>();
  const collectors: (() => void)[] = [];

  function family<F extends Family>(name: string, make: () => F): F {
    const existing = families.get(name);
    if (existing) return existing as F;
    const f = make();
    families.set(name, f);
    return f;
  }

  return {
    counter(name, help) {
      const f = family(name, () => ({ kind: 'counter' as const, name, help, series: new Map<string, Series>() }));
      return {
        inc(labels = {}, by = 1) {
          const k = key(labels);
          const s = f.series.get(k) ?? { labels, value: 0 };
          s.value += by;
          f.series.set(k, s);
        },
      };
    },
    gauge(name, help) {
      const f = family(name, () => ({ kind: 'gauge' as const, name, help, series: new Map<string, Series>() }));
      return {
        set(value, labels = {}) {
          f.series.set(key(labels), { labels, value });
        },
      };
    },
    histogram(name, help, buckets) {
      const sorted = [...buckets].sort((a, b) => a - b);
      const f = family(name, () => ({
        kind: 'histogram' as const,
        name,
        help,
        buckets: sorted,
        series: new Map<string, HistSeries>(),
      }));
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
        observe(value, labels = {}) {
          record(seriesFor(labels), value);
        },
        series(labels) {
          const s = seriesFor(labels);
          return { observe: (value) => record(s, value) };
        },
      };
    },
    collect(fn) {
      collectors.push(fn);
    },
    render() {
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
