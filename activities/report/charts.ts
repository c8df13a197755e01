/**
 * Charts as inline SVG strings, for self-contained HTML reports (no script, no network, no
 * library): horizontal bar charts (a funnel, counts per reason), histograms with stacked
 * series (coverage, script length, rounds, pass/fail), and grouped bar charts comparing series
 * across groups (Pass@k per model, per self-repair round, per repository). Pure functions; any
 * report can use them.
 *
 * Every chart is an `<svg class="chart">` with one `<rect class="bar">` per drawn bar, each
 * carrying `data-value` and a `<title>` tooltip, so a page can be checked for what it draws.
 */

export const PALETTE = ['#3b6fb6', '#d9822b', '#3a9d5d', '#c23b3b', '#7a5bb5', '#8c6d46', '#c75aa8', '#6b7785'] as const;

export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A number as a label: integers as they are, others to at most two decimals. */
export function formatNumber(n: number): string {
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  return n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

export interface Bar {
  label: string;
  value: number;
  color?: string;
  /** Extra text for the tooltip. */
  note?: string;
}

export interface BarChartOptions {
  title: string;
  bars: Bar[];
  /** How values are printed beside the bars. */
  format?: (value: number) => string;
  width?: number;
}

const FONT = 'font-family="system-ui, sans-serif" font-size="12"';

function svgOpen(title: string, width: number, height: number, id?: string): string {
  const named = id ? `id="${escapeXml(id)}" data-chart="${escapeXml(id)}" ` : '';
  return (
    `<svg class="chart" ${named}xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${escapeXml(title)}" ` +
    `viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" style="max-width:100%;height:auto">` +
    `<title>${escapeXml(title)}</title>`
  );
}

function noData(title: string, width: number): string {
  return `${svgOpen(title, width, 40)}<text x="${width / 2}" y="24" text-anchor="middle" fill="#777" ${FONT}>no data</text></svg>`;
}

/** Horizontal bars, one per row, labelled on the left and valued on the right. */
export function barChart({ title, bars, format = formatNumber, width = 640 }: BarChartOptions): string {
  if (bars.length === 0) return noData(title, width);
  const rowHeight = 24;
  const labelWidth = Math.min(240, Math.max(60, ...bars.map((b) => b.label.length * 7 + 12)));
  const valueWidth = Math.max(40, ...bars.map((b) => format(b.value).length * 7 + 8));
  const plot = width - labelWidth - valueWidth;
  const max = Math.max(...bars.map((b) => b.value), 0);
  const height = bars.length * rowHeight + 8;
  const rows = bars.map((b, i) => {
    const y = 4 + i * rowHeight;
    const w = max > 0 ? Math.max(b.value > 0 ? 1 : 0, (b.value / max) * plot) : 0;
    const color = b.color ?? PALETTE[0];
    const tip = `${b.label}: ${format(b.value)}${b.note ? ` (${b.note})` : ''}`;
    return (
      `<text x="${labelWidth - 6}" y="${y + 16}" text-anchor="end" ${FONT}>${escapeXml(b.label)}</text>` +
      `<rect class="bar" x="${labelWidth}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowHeight - 6}" fill="${color}" data-value="${b.value}"><title>${escapeXml(tip)}</title></rect>` +
      `<text x="${(labelWidth + w + 4).toFixed(1)}" y="${y + 16}" ${FONT}>${escapeXml(format(b.value))}</text>`
    );
  });
  return `${svgOpen(title, width, height)}${rows.join('')}</svg>`;
}

/** Smallest and largest value, without spreading a possibly huge array into arguments. */
function extent(values: readonly number[]): [number, number] {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return [min, max];
}

/** A histogram bin: values v with lo <= v < hi, or lo <= v <= hi for the last bin. */
export interface Bin {
  label: string;
  lo: number;
  hi: number;
}

/** One bin per integer from the smallest to the largest value, merged into wider bins past `maxBins`. */
export function integerBins(values: readonly number[], maxBins = 20): Bin[] {
  if (values.length === 0) return [];
  const [min, max] = extent(values);
  const lo = Math.floor(min);
  const hi = Math.floor(max);
  const step = Math.max(1, Math.ceil((hi - lo + 1) / maxBins));
  const bins: Bin[] = [];
  for (let start = lo; start <= hi; start += step) {
    const end = start + step - 1;
    bins.push({ label: step === 1 ? String(start) : `${start}-${end}`, lo: start, hi: end + 1 });
  }
  return bins;
}

/** Ten-percent bins of a fraction (0..1), with a bin of its own for exactly 100%. */
export function fractionBins(): Bin[] {
  const bins: Bin[] = [];
  for (let i = 0; i < 10; i++) bins.push({ label: `${i * 10}-${i * 10 + 10}%`, lo: i / 10, hi: (i + 1) / 10 });
  bins.push({ label: '100%', lo: 1, hi: 1 });
  return bins;
}

/** About `count` bins of a round width (1, 2 or 5 times a power of ten) covering the values. */
export function rangeBins(values: readonly number[], count = 12): Bin[] {
  if (values.length === 0) return [];
  const [min, max] = extent(values);
  const raw = Math.max((max - min) / count, 1e-9);
  const power = 10 ** Math.floor(Math.log10(raw));
  const width = [1, 2, 5, 10].map((m) => m * power).find((w) => w >= raw)!;
  const start = Math.floor(min / width) * width;
  const bins: Bin[] = [];
  for (let lo = start; lo <= max; lo += width) bins.push({ label: `${formatNumber(lo)}-${formatNumber(lo + width)}`, lo, hi: lo + width });
  return bins;
}

/** Counts of values per bin; a value outside every bin is not counted. */
export function countInBins(values: readonly number[], bins: readonly Bin[]): number[] {
  const counts = bins.map(() => 0);
  for (const v of values) {
    // A degenerate bin (lo == hi, like '100%') takes its exact value before the bin ending there.
    let i = bins.findIndex((b) => b.lo === b.hi && v === b.lo);
    if (i < 0) i = bins.findIndex((b, k) => v >= b.lo && (v < b.hi || (k === bins.length - 1 && v <= b.hi)));
    if (i >= 0) counts[i]!++;
  }
  return counts;
}

export interface HistogramSeries {
  name: string;
  values: readonly number[];
  color?: string;
}

export interface HistogramOptions {
  title: string;
  /** Stacked in the order given. */
  series: HistogramSeries[];
  bins: Bin[];
  xLabel?: string;
  width?: number;
}

/** Vertical bars per bin, series stacked, with a legend when there is more than one series. */
export function histogram({ title, series, bins, xLabel, width = 640 }: HistogramOptions): string {
  const counts = series.map((s) => countInBins(s.values, bins));
  const totals = bins.map((_, i) => counts.reduce((sum, c) => sum + c[i]!, 0));
  const max = Math.max(0, ...totals);
  if (bins.length === 0 || max === 0) return noData(title, width);
  const legend = series.length > 1 ? 20 : 0;
  const top = 16 + legend;
  const plotHeight = 160;
  const left = 36;
  const bottom = 44;
  const height = top + plotHeight + bottom;
  const slot = (width - left - 8) / bins.length;
  const barWidth = Math.max(2, slot * 0.8);
  const y = (v: number) => top + plotHeight - (v / max) * plotHeight;
  const parts: string[] = [];
  // Axis: zero line and the maximum.
  parts.push(`<line x1="${left}" y1="${top + plotHeight}" x2="${width - 8}" y2="${top + plotHeight}" stroke="#999"/>`);
  parts.push(`<text x="${left - 4}" y="${top + 4}" text-anchor="end" ${FONT}>${formatNumber(max)}</text>`);
  parts.push(`<text x="${left - 4}" y="${top + plotHeight}" text-anchor="end" ${FONT}>0</text>`);
  bins.forEach((bin, i) => {
    const x = left + i * slot + (slot - barWidth) / 2;
    let base = 0;
    series.forEach((s, k) => {
      const c = counts[k]![i]!;
      if (c > 0) {
        const color = s.color ?? PALETTE[k % PALETTE.length];
        const tip = `${bin.label}: ${c}${series.length > 1 ? ` ${s.name}` : ''}`;
        parts.push(
          `<rect class="bar" x="${x.toFixed(1)}" y="${y(base + c).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${(y(base) - y(base + c)).toFixed(1)}" fill="${color}" data-value="${c}"><title>${escapeXml(tip)}</title></rect>`,
        );
      }
      base += c;
    });
    // Bin labels, thinned out when they would overlap.
    const every = Math.ceil(bins.length / Math.max(1, Math.floor((width - left) / 56)));
    if (i % every === 0) parts.push(`<text x="${(x + barWidth / 2).toFixed(1)}" y="${top + plotHeight + 16}" text-anchor="middle" ${FONT}>${escapeXml(bin.label)}</text>`);
  });
  if (xLabel) parts.push(`<text x="${(left + width) / 2}" y="${height - 6}" text-anchor="middle" fill="#555" ${FONT}>${escapeXml(xLabel)}</text>`);
  if (legend) {
    let lx = left;
    series.forEach((s, k) => {
      parts.push(`<rect x="${lx}" y="4" width="12" height="12" fill="${s.color ?? PALETTE[k % PALETTE.length]}"/><text x="${lx + 16}" y="14" ${FONT}>${escapeXml(s.name)}</text>`);
      lx += 28 + s.name.length * 7;
    });
  }
  return `${svgOpen(title, width, height)}${parts.join('')}</svg>`;
}

/** A share (0..1) as a percentage label. */
export function formatPercent(v: number): string {
  return `${(v * 100).toFixed(1)}%`;
}

export interface BarGroup {
  label: string;
  /** One value per series (null: no value, no bar). */
  values: (number | null)[];
}

export interface GroupedBarChartOptions {
  /** The chart's id (also `data-chart`), so a page and its tests can find it. */
  id: string;
  title: string;
  /** Series names, one colour each (the palette in order). */
  series: string[];
  groups: BarGroup[];
  /** Top of the value axis; default: the largest value. */
  max?: number;
  format?: (value: number) => string;
  /** Horizontal bars (one row per group), for long group labels. */
  horizontal?: boolean;
}

const seriesColor = (i: number) => PALETTE[i % PALETTE.length]!;

/** A bar of a grouped chart: series, group and value are attributes, the tooltip says them. */
function groupedBar(o: GroupedBarChartOptions, si: number, group: string, v: number, box: { x: number; y: number; width: number; height: number }, format: (v: number) => string): string {
  const series = o.series[si] ?? '';
  return (
    `<rect class="bar" data-series="${escapeXml(series)}" data-group="${escapeXml(group)}" data-value="${v}" ` +
    `x="${box.x.toFixed(1)}" y="${box.y.toFixed(1)}" width="${box.width.toFixed(1)}" height="${box.height}" fill="${seriesColor(si)}">` +
    `<title>${escapeXml(`${series} · ${group}: ${format(v)}`)}</title></rect>`
  );
}

function seriesLegend(series: string[], x: number, y: number): string {
  return series
    .map((s, i) => `<rect x="${x + i * 150}" y="${y - 10}" width="10" height="10" fill="${seriesColor(i)}"/><text x="${x + i * 150 + 14}" y="${y}" ${FONT}>${escapeXml(s.slice(0, 20))}</text>`)
    .join('');
}

/** Bars of several series side by side in each group, vertical (or horizontal, one row per group). */
export function groupedBarChart(o: GroupedBarChartOptions): string {
  const values = o.groups.flatMap((g) => g.values).filter((v): v is number => v !== null && Number.isFinite(v));
  const max = o.max ?? Math.max(1e-9, ...values);
  const format = o.format ?? formatNumber;
  const scale = (v: number) => Math.max(0, Math.min(1, v / max));
  const n = o.series.length;
  const parts: string[] = [];
  let width: number;
  let height: number;
  if (o.horizontal) {
    const barH = 12;
    const rowH = n * barH + 10;
    const left = 220;
    const top = 40;
    const plotW = 420;
    width = left + plotW + 70;
    height = top + o.groups.length * rowH + 40;
    for (const t of [0, 0.5, 1]) {
      const x = left + t * plotW;
      parts.push(`<line x1="${x}" x2="${x}" y1="${top}" y2="${height - 30}" stroke="#eee"/><text x="${x}" y="${top - 6}" text-anchor="middle" ${FONT}>${escapeXml(format(t * max))}</text>`);
    }
    o.groups.forEach((g, gi) => {
      const gy = top + gi * rowH + 5;
      parts.push(`<text x="${left - 8}" y="${gy + (n * barH) / 2 + 4}" text-anchor="end" ${FONT}>${escapeXml(g.label.slice(0, 34))}</text>`);
      g.values.forEach((v, si) => {
        if (v === null || !Number.isFinite(v)) return;
        parts.push(groupedBar(o, si, g.label, v, { x: left, y: gy + si * barH, width: scale(v) * plotW, height: barH - 2 }, format));
      });
    });
    parts.push(seriesLegend(o.series, left, height - 8));
  } else {
    const barW = 18;
    const groupW = Math.max(60, n * barW + 24);
    const left = 48;
    const top = 32;
    const plotH = 180;
    width = Math.max(360, left + o.groups.length * groupW + 20);
    height = top + plotH + 54;
    for (const t of [0, 0.25, 0.5, 0.75, 1]) {
      const y = top + plotH - t * plotH;
      parts.push(`<line x1="${left}" x2="${width - 10}" y1="${y}" y2="${y}" stroke="#eee"/><text x="${left - 6}" y="${y + 4}" text-anchor="end" ${FONT}>${escapeXml(format(t * max))}</text>`);
    }
    o.groups.forEach((g, gi) => {
      const gx = left + gi * groupW + (groupW - n * barW) / 2;
      g.values.forEach((v, si) => {
        if (v === null || !Number.isFinite(v)) return;
        const h = scale(v) * plotH;
        parts.push(groupedBar(o, si, g.label, v, { x: gx + si * barW, y: top + plotH - h, width: barW - 3, height: h }, format));
      });
      parts.push(`<text x="${left + gi * groupW + groupW / 2}" y="${top + plotH + 16}" text-anchor="middle" ${FONT}>${escapeXml(g.label.slice(0, 18))}</text>`);
    });
    parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#888"/>`);
    parts.push(seriesLegend(o.series, left, height - 12));
  }
  // The title is drawn too: a page may show several of these charts side by side.
  return `${svgOpen(o.title, width, height, o.id)}<text x="8" y="14" font-weight="600" ${FONT}>${escapeXml(o.title)}</text>${parts.join('')}</svg>`;
}
