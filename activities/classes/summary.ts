/**
 * The corpus summary (`classes-summary.json`): the distribution of every metric, over all
 * classes and per documentation level, and the count of each level. Built one record at a time;
 * it keeps the metric values (a few hundred bytes per class) to compute the quartiles.
 */
import { CLASS_METRICS, type MetricGroup } from './metrics';
import { DOCUMENTATION_LEVELS, type ClassRecord, type DocumentationLevel } from './record';

export interface Distribution {
  /** Classes with a value (null values are counted apart). */
  count: number;
  nulls: number;
  min: number | null;
  p25: number | null;
  median: number | null;
  p75: number | null;
  max: number | null;
  mean: number | null;
  /** Population standard deviation. */
  std: number | null;
}

export interface MetricDistribution extends Distribution {
  group: MetricGroup;
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** Quantile by linear interpolation between order statistics (numpy's default). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

export function distribution(values: readonly (number | null)[]): Distribution {
  const present = Float64Array.from(values.filter((v): v is number => v !== null)).sort();
  const nulls = values.length - present.length;
  if (present.length === 0) return { count: 0, nulls, min: null, p25: null, median: null, p75: null, max: null, mean: null, std: null };
  let sum = 0;
  for (const v of present) sum += v;
  const mean = sum / present.length;
  let sq = 0;
  for (const v of present) sq += (v - mean) ** 2;
  return {
    count: present.length,
    nulls,
    min: present[0]!,
    p25: round(quantile(present, 0.25)),
    median: round(quantile(present, 0.5)),
    p75: round(quantile(present, 0.75)),
    max: present[present.length - 1]!,
    mean: round(mean),
    std: round(Math.sqrt(sq / present.length)),
  };
}

export class MetricsSummary {
  private readonly values = new Map<string, (number | null)[]>(CLASS_METRICS.map((c) => [c.name, []]));
  private readonly levels: DocumentationLevel[] = [];
  private methods = 0;

  add(record: ClassRecord): void {
    for (const c of CLASS_METRICS) this.values.get(c.name)!.push(record.metrics[c.name] ?? null);
    this.levels.push(record.documentation_level);
    this.methods += record.method_metrics.length;
  }

  get classes(): number {
    return this.levels.length;
  }

  result() {
    const of = (keep: (i: number) => boolean): Record<string, MetricDistribution> =>
      Object.fromEntries(CLASS_METRICS.map((c) => [c.name, { group: c.group, ...distribution(this.values.get(c.name)!.filter((_, i) => keep(i))) }]));
    const documentation = Object.fromEntries(
      DOCUMENTATION_LEVELS.map((level) => {
        const n = this.levels.filter((l) => l === level).length;
        return [level, { classes: n, share: this.levels.length ? round(n / this.levels.length) : 0 }];
      }),
    ) as Record<DocumentationLevel, { classes: number; share: number }>;
    const byLevel = Object.fromEntries(DOCUMENTATION_LEVELS.map((level) => [level, of((i) => this.levels[i] === level)])) as Record<DocumentationLevel, Record<string, MetricDistribution>>;
    return { classes: this.levels.length, methods: this.methods, documentation, metrics: of(() => true), byLevel };
  }
}
