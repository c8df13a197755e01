/** eval-report.html rendered by a real browser (headless Chromium): the charts are drawn. */
/// <reference lib="dom" />
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FunctionEvalResult, SampleRound } from '../../../activities/eval/contracts';
import { parseEvalDataset } from '../../../activities/eval/dataset';
import { rankingSummary } from '../../../activities/eval/ranking-summary';
import { renderEvalReport } from '../../../activities/eval/report';
import { evalLineOf } from '../../../activities/eval/results';
import { parseEvalSettings } from '../../../activities/eval/settings';
import { summarize } from '../../../activities/eval/summary';
import { PALETTE } from '../../../activities/report/charts';
import { DEMO_DATASET } from '../../support/fixtures';
import { countColour, readPng, rowsWithColour } from '../../support/png';
import { runScript } from '../../support/processes';
import { launchChromium, type HeadlessChromium } from '../../support/tools';

const records = parseEvalDataset(fs.readFileSync(DEMO_DATASET, 'utf8'));
const settings = parseEvalSettings({ n: 4, ks: [1, 2], repairRounds: 1, select: 'genx' });
const noUsage = { calls: 1, cachedCalls: 0, promptTokens: 10, completionTokens: 5, costUsd: 0, latencyMs: 0 };

/** A model's run: `passing[i]` samples of function i pass at once, one more after repair. */
function runSummary(model: string, passing: number[]) {
  const lines = records.map((record, i) => {
    const samples = Array.from({ length: 4 }, (_, s) => {
      const first = s < passing[i]!;
      const rounds: SampleRound[] = [
        { round: 0, candidateKey: null, run: { passed: first, kind: first ? null : s % 2 ? 'assertion' : 'exception', exceptionType: first ? null : 'TypeError', summary: '', resultKey: null, durationMs: 1 }, usage: noUsage },
      ];
      if (!first) rounds.push({ round: 1, candidateKey: null, run: { passed: s === passing[i], kind: s === passing[i] ? null : 'timeout', exceptionType: null, summary: '', resultKey: null, durationMs: 1 }, usage: noUsage });
      return { sample: s, rounds, error: null };
    });
    const hidden = samples.map((s) => s.rounds[0]!.run.passed);
    const result: FunctionEvalResult = {
      functionId: record.functionId,
      error: null,
      stepErrors: [],
      prompt: null,
      unusedDocstringUsage: null,
      samples,
      ranking: rankingSummary({ rows: hidden.map((h) => (h ? '1110' : '1001')), truthRow: '1110', hidden, ks: [1, 2], genx: { tolerance: 1e-9, maxIterations: 1000 } }),
      rankingUsage: null,
      training: null,
      augmentation: null,
    };
    return evalLineOf(result, { record, settings, model, candidates: new Map() });
  });
  return summarize(lines, { runId: `eval-${model}`, model, settings: { ...settings, model }, dataset: { file: DEMO_DATASET, format: 'ours', functions: 3, splits: { train: 3, eval: 0, none: 0 } } });
}

describe('the evaluation report in a browser', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-report-'));
  const file = path.join(dir, 'eval-report.html');
  const summaries = [runSummary('model-a', [1, 2, 3]), runSummary('model-b', [0, 1, 4])];
  fs.writeFileSync(file, renderEvalReport(summaries));
  let browser: HeadlessChromium;
  /** Requests the page made beyond its own file (there must be none). */
  const requests: string[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    const pages = new Set([`file://${file}`, `file://${path.join(dir, 'hostile-report.html')}`]);
    await browser.context.route('**/*', (route) => {
      const url = route.request().url();
      if (!pages.has(url)) requests.push(url);
      return pages.has(url) ? route.continue() : route.abort();
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('draws every chart: bars of each series are on the screenshot, in each chart region', async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize({ width: 1300, height: 1000 });
    await page.goto(`file://${file}`);
    const image = readPng(await page.screenshot({ fullPage: true }));
    await page.close();
    expect(image.width).toBe(1300);
    // Two models: two series colours in the Pass@k, repair, failure-kind and repository charts;
    // three ranking methods: a third colour in the ranking charts only.
    const [a, b, c] = [PALETTE[0], PALETTE[1], PALETTE[2]];
    expect(countColour(image, a)).toBeGreaterThan(2000);
    expect(countColour(image, b)).toBeGreaterThan(2000);
    expect(countColour(image, c)).toBeGreaterThan(300);
    // Bars of the first colour appear in several separate vertical bands (one per chart).
    const rows = rowsWithColour(image, a);
    const bands = rows.filter((y, i) => i === 0 || y - rows[i - 1]! > 20).length;
    expect(bands).toBeGreaterThanOrEqual(5);
  });

  it('lays the page out without scripts or network: the DOM holds the charts and their bars', async () => {
    const page = await browser.context.newPage();
    await page.goto(`file://${file}`);
    const charts = await page.$$eval('svg.chart', (svgs) => svgs.map((s) => s.getAttribute('data-chart')));
    expect(charts).toEqual(['pass-at-k', 'repair-rounds', 'failure-kinds', 'ranking-hit-0', 'ranking-precision-0', 'ranking-hit-1', 'ranking-precision-1', 'per-repository']);
    // Pass@k: 2 models × 2 k; drawn bar heights follow the values (model-a pass@1 = mean of 1/4, 2/4, 3/4).
    const passBars = await page.$$eval('svg[data-chart="pass-at-k"] rect.bar', (rects) => rects.map((r) => [Number(r.getAttribute('data-value')), (r as SVGGraphicsElement).getBBox().height]));
    await page.close();
    expect(passBars).toHaveLength(4);
    expect(passBars[0]![0]).toBeCloseTo(0.5, 12);
    for (const [value, height] of passBars) expect(height).toBeCloseTo(value! * 180, 4);
    // Nothing loaded from elsewhere: no script, no external source or link.
    expect(fs.readFileSync(file, 'utf8')).not.toMatch(/<script|<link|\b(src|href)=/);
    expect(requests).toEqual([]);
  });

  it('eval.ts --report escapes hostile names from a run folder and refuses a summary that is not one', async () => {
    const hostile = {
      model: '"><img src=x onerror="document.title=\'pwned\'">',
      repo: '<script>document.title="pwned"</script>',
      file: '</p><svg onload="document.title=\'pwned\'">',
    };
    const good = runSummary('model-a', [1, 2, 3]);
    const poisoned = {
      ...good,
      model: hostile.model,
      runId: `${hostile.model}-run`,
      dataset: { ...good.dataset, file: hostile.file },
      byRepository: { [hostile.repo]: Object.values(good.byRepository)[0]! },
      errors: [{ functionId: 'f', error: hostile.repo }],
      errorCount: 1,
      exceptionTypes: { initial: { [hostile.model]: 3 }, final: {} },
    };
    const runDir = path.join(dir, 'hostile-run');
    fs.mkdirSync(runDir);
    fs.writeFileSync(path.join(runDir, 'eval-summary.json'), JSON.stringify(poisoned));
    const out = path.join(dir, 'hostile-report.html');
    const made = await runScript('scripts/eval.ts', ['--report', out, runDir], { env: {} });
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: '' });

    const html = fs.readFileSync(out, 'utf8');
    expect(html).not.toMatch(/<script|<img|<svg onload|onerror="/);
    const page = await browser.context.newPage();
    await page.goto(`file://${out}`);
    // The names are shown as text, and none of them became markup that ran.
    expect(await page.title()).not.toBe('pwned');
    const text = await page.evaluate(() => document.body.innerText);
    expect(text).toContain(hostile.model);
    expect(text).toContain(hostile.repo);
    expect(text).toContain(hostile.file);
    expect(await page.$$eval('img, script, body svg[onload]', (els) => els.length)).toBe(0);
    await page.close();
    expect(requests).toEqual([]);

    // A value of the wrong type (markup where a count belongs) is refused, naming the file and the field.
    const badDir = path.join(dir, 'bad-run');
    fs.mkdirSync(badDir);
    fs.writeFileSync(path.join(badDir, 'eval-summary.json'), JSON.stringify({ ...good, evaluated: '<script>document.title="pwned"</script>' }));
    const badOut = path.join(dir, 'bad-report.html');
    const refused = await runScript('scripts/eval.ts', ['--report', badOut, badDir], { env: {} });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`${path.join(badDir, 'eval-summary.json')} is not an evaluation summary: evaluated:`);
    expect(fs.existsSync(badOut)).toBe(false);
  });
});
