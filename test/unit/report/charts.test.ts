import { barChart, countInBins, escapeXml, fractionBins, histogram, integerBins, rangeBins } from '../../../activities/report/charts';

/** The bars a chart draws: value and width or height, from its SVG text. */
function bars(svg: string): { value: number; width: number; height: number; title: string }[] {
  return [...svg.matchAll(/<rect class="bar"[^>]*?(?:width="([\d.]+)")[^>]*?height="([\d.]+)"[^>]*?data-value="([\d.]+)"><title>([^<]*)<\/title>/g)].map((m) => ({
    width: Number(m[1]),
    height: Number(m[2]),
    value: Number(m[3]),
    title: m[4]!,
  }));
}

describe('charts', () => {
  it('bar chart: one bar per row, widths proportional to the values, labels escaped', () => {
    const svg = barChart({ title: 'Funnel <all>', bars: [{ label: 'prepare', value: 10 }, { label: 'a&b', value: 5 }, { label: 'none', value: 0 }] });
    expect(svg.startsWith('<svg class="chart"')).toBe(true);
    expect(svg).toContain('aria-label="Funnel &lt;all&gt;"');
    expect(svg).toContain('>a&amp;b<');
    const drawn = bars(svg);
    expect(drawn.map((b) => b.value)).toEqual([10, 5, 0]);
    expect(drawn[1]!.width).toBeCloseTo(drawn[0]!.width / 2, 0);
    expect(drawn[2]!.width).toBe(0);
  });

  it('an empty chart says so and draws no bar', () => {
    expect(bars(barChart({ title: 't', bars: [] }))).toHaveLength(0);
    expect(barChart({ title: 't', bars: [] })).toContain('no data');
    expect(histogram({ title: 't', series: [{ name: 's', values: [] }], bins: integerBins([]) })).toContain('no data');
  });

  it('fraction bins put exactly 100% in a bin of its own', () => {
    const bins = fractionBins();
    expect(bins).toHaveLength(11);
    expect(countInBins([0, 0.05, 0.8, 0.95, 0.999, 1, 1], bins)).toEqual([2, 0, 0, 0, 0, 0, 0, 0, 1, 2, 2]);
  });

  it('integer bins: one per value, merged past the maximum number of bins', () => {
    expect(integerBins([0, 2, 3]).map((b) => b.label)).toEqual(['0', '1', '2', '3']);
    expect(countInBins([0, 2, 3, 3], integerBins([0, 2, 3]))).toEqual([1, 0, 1, 2]);
    const wide = integerBins([0, 99], 10);
    expect(wide).toHaveLength(10);
    expect(wide[0]!.label).toBe('0-9');
    expect(countInBins([0, 9, 10, 99], wide)).toEqual([2, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
  });

  it('range bins have a round width and hold every value', () => {
    const values = [26, 35, 37, 120];
    const bins = rangeBins(values, 5);
    const width = bins[0]!.hi - bins[0]!.lo;
    expect([1, 2, 5, 10, 20, 50]).toContain(width);
    expect(countInBins(values, bins).reduce((a, b) => a + b, 0)).toBe(values.length);
    // A large array does not overflow the call stack.
    expect(rangeBins(Array.from({ length: 300_000 }, (_, i) => i), 10).length).toBeGreaterThan(0);
  });

  it('histogram stacks its series per bin, with a legend', () => {
    const svg = histogram({
      title: 'rounds',
      series: [
        { name: 'accepted', values: [0, 0, 1] },
        { name: 'rejected', values: [0, 2] },
      ],
      bins: integerBins([0, 1, 2]),
    });
    const drawn = bars(svg);
    // bin 0: accepted 2 and rejected 1; bin 1: accepted 1; bin 2: rejected 1.
    expect(drawn.map((b) => b.title)).toEqual(['0: 2 accepted', '0: 1 rejected', '1: 1 accepted', '2: 1 rejected']);
    expect(drawn[0]!.height).toBeCloseTo(2 * drawn[1]!.height, 0);
    expect(svg).toContain('>accepted</text>');
  });

  it('escapes everything that could break out of markup', () => {
    expect(escapeXml(`<script>"x" & 'y'</script>`)).toBe('&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;');
  });
});
