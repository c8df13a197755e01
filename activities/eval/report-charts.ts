/**
 * Grouped bar charts as inline SVG: no script, no network, so a report page is one file that any
 * browser draws. Each bar is a `rect.bar` carrying its series and value, which tests read back.
 */

export const SERIES_COLORS = ['#2f6db5', '#e07b39', '#3a9e5c', '#b8423c', '#7d5ab5', '#8c6d46', '#c2559a', '#6b7b8c'] as const;

export interface BarGroup {
  label: string;
  /** One value per series (null: no value, no bar). */
  values: (number | null)[];
}

export interface BarChartSpec {
  id: string;
  title: string;
  series: string[];
  groups: BarGroup[];
  /** Top of the value axis; default: the largest value (at least 1e-9). */
  max?: number;
  format?: (v: number) => string;
  /** Horizontal bars (one row per group), for long group labels. */
  horizontal?: boolean;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export const percent = (v: number) => `${(v * 100).toFixed(1)}%`;

function colorOf(i: number): string {
  return SERIES_COLORS[i % SERIES_COLORS.length]!;
}

function legend(series: string[], x: number, y: number): string {
  return series
    .map((s, i) => `<g transform="translate(${x + i * 150},${y})"><rect x="0" y="-9" width="10" height="10" fill="${colorOf(i)}"/><text x="14" y="0" class="legend">${escapeHtml(s.slice(0, 20))}</text></g>`)
    .join('');
}

function verticalChart(spec: BarChartSpec, max: number, format: (v: number) => string): string {
  const n = spec.series.length;
  const barW = 18;
  const groupW = Math.max(60, n * barW + 24);
  const left = 48;
  const top = 40;
  const plotH = 180;
  const width = Math.max(360, left + spec.groups.length * groupW + 20);
  const height = top + plotH + 54;
  const parts: string[] = [];
  for (const t of [0, 0.25, 0.5, 0.75, 1]) {
    const y = top + plotH - t * plotH;
    parts.push(`<line x1="${left}" x2="${width - 10}" y1="${y}" y2="${y}" class="grid"/><text x="${left - 6}" y="${y + 4}" class="tick" text-anchor="end">${escapeHtml(format(t * max))}</text>`);
  }
  spec.groups.forEach((g, gi) => {
    const gx = left + gi * groupW + (groupW - n * barW) / 2;
    g.values.forEach((v, si) => {
      if (v === null || !Number.isFinite(v)) return;
      const h = Math.max(0, Math.min(1, v / max)) * plotH;
      const x = gx + si * barW;
      parts.push(
        `<rect class="bar" data-series="${escapeHtml(spec.series[si] ?? '')}" data-group="${escapeHtml(g.label)}" data-value="${v}" x="${x}" y="${top + plotH - h}" width="${barW - 3}" height="${h}" fill="${colorOf(si)}"><title>${escapeHtml(`${spec.series[si]} · ${g.label}: ${format(v)}`)}</title></rect>`,
      );
    });
    parts.push(`<text x="${left + gi * groupW + groupW / 2}" y="${top + plotH + 16}" class="tick" text-anchor="middle">${escapeHtml(g.label.slice(0, 18))}</text>`);
  });
  parts.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" class="axis"/>`);
  parts.push(legend(spec.series, left, height - 12));
  return svg(spec, width, height, parts);
}

function horizontalChart(spec: BarChartSpec, max: number, format: (v: number) => string): string {
  const n = spec.series.length;
  const barH = 12;
  const rowH = n * barH + 10;
  const left = 220;
  const top = 40;
  const plotW = 420;
  const width = left + plotW + 70;
  const height = top + spec.groups.length * rowH + 40;
  const parts: string[] = [];
  for (const t of [0, 0.5, 1]) {
    const x = left + t * plotW;
    parts.push(`<line x1="${x}" x2="${x}" y1="${top}" y2="${height - 30}" class="grid"/><text x="${x}" y="${top - 6}" class="tick" text-anchor="middle">${escapeHtml(format(t * max))}</text>`);
  }
  spec.groups.forEach((g, gi) => {
    const gy = top + gi * rowH + 5;
    parts.push(`<text x="${left - 8}" y="${gy + (n * barH) / 2 + 4}" class="tick" text-anchor="end">${escapeHtml(g.label.slice(0, 34))}</text>`);
    g.values.forEach((v, si) => {
      if (v === null || !Number.isFinite(v)) return;
      const w = Math.max(0, Math.min(1, v / max)) * plotW;
      parts.push(
        `<rect class="bar" data-series="${escapeHtml(spec.series[si] ?? '')}" data-group="${escapeHtml(g.label)}" data-value="${v}" x="${left}" y="${gy + si * barH}" width="${w}" height="${barH - 2}" fill="${colorOf(si)}"><title>${escapeHtml(`${spec.series[si]} · ${g.label}: ${format(v)}`)}</title></rect>`,
      );
    });
  });
  parts.push(legend(spec.series, left, height - 8));
  return svg(spec, width, height, parts);
}

function svg(spec: BarChartSpec, width: number, height: number, parts: string[]): string {
  return [
    `<svg class="chart" id="${escapeHtml(spec.id)}" data-chart="${escapeHtml(spec.id)}" xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(spec.title)}">`,
    `<text x="8" y="20" class="title">${escapeHtml(spec.title)}</text>`,
    ...parts,
    '</svg>',
  ].join('\n');
}

export function barChart(spec: BarChartSpec): string {
  const values = spec.groups.flatMap((g) => g.values).filter((v): v is number => v !== null && Number.isFinite(v));
  const max = spec.max ?? Math.max(1e-9, ...values);
  const format = spec.format ?? ((v: number) => (Math.round(v * 100) / 100).toString());
  return spec.horizontal ? horizontalChart(spec, max, format) : verticalChart(spec, max, format);
}

/** The style the charts' classes refer to. */
export const CHART_CSS = `
svg.chart { background: #fff; border: 1px solid #ddd; border-radius: 4px; margin: 8px 8px 8px 0; }
svg.chart .title { font: 600 14px sans-serif; fill: #222; }
svg.chart .tick, svg.chart .legend { font: 11px sans-serif; fill: #444; }
svg.chart .grid { stroke: #eee; }
svg.chart .axis { stroke: #888; }
`;
