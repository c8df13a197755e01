import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FolderRunReader, RunNotFoundError, StoreRunReader, openRunReader } from '../../../activities/dataset/run-reader';
import type { StoredRecord } from '../../../activities/store/records';
import { reasonKindOf } from '../../../activities/report/report-data';
import { writeRunReport } from '../../../activities/report/write-report';
import { LocalStore } from '../../../activities/store/local';
import { datasetRecordOf } from '../../support/records';
import { pipelineSettingsFrom, runSettingsFrom } from '../../../activities/run-settings';
import { loadConfig } from '../../../temporal.config';

const HOSTILE = '<img src=x onerror=alert(1)>';

/** A finished run in a real local store: one accepted and one rejected function, as the crawl stores them. */
async function storeRun(dataDir: string, frozen: unknown = { pipeline: { debugRounds: 3 } }): Promise<{ store: LocalStore; outDir: string }> {
  const store = new LocalStore(dataDir);
  const outDir = path.join(dataDir, 'out', 'r1');
  const fnOf = (functionId: string, qualname: string) => ({ functionId, repoId: 'o/r', commit: 'c', path: 'm.py', qualname, name: qualname, split: 'train' as const, license: 'mit' });
  await store.createRun({ runId: 'r1', createdAt: new Date().toISOString(), settingsKey: await store.putJson(frozen), sourcesKey: await store.putJson([]), sources: 0, outDir });
  await store.putRepoProgress('r1', {
    index: 0,
    outcome: { repoId: 'o/r', source: { kind: 'github', fullName: 'o/r' }, skipped: null, candidates: 2, accepted: 1, rejected: 1 },
    candidatePages: [await store.putJson([fnOf('fn1', HOSTILE), fnOf('fn2', 'g')])],
    done: true,
  });
  const accepted: StoredRecord = {
    accepted: true,
    fn: fnOf('fn1', HOSTILE),
    record: datasetRecordOf(fnOf('fn1', HOSTILE), 'r1', {
      func_name: 'f',
      eval_script: 'def f():\n    return "</script><script>alert(2)</script>"\n\ndef test_f():\n    assert f() == f_new_implementation()\n',
      coverage_rate: 0.5,
      packages: [{ name: 'numpy', version: '2.0.0' }],
      coverage_rounds: 1,
      llm_tokens: 10,
      solve_rate: 0.5,
      solvability: { model: 'm', samples: 2, passed: 1, passed_initially: 0, docstring: 'original', missing_docstring: 'generate', judged: 1, removed_assertions: [{ line: 4, text: `assert f() == "${HOSTILE}"` }] },
    }),
  };
  const rejected: StoredRecord = {
    accepted: false,
    fn: fnOf('fn2', 'g'),
    rejection: { function_id: 'fn2', repo_name: 'o/r', func_path: 'm.py', qualname: 'g', split: 'train', stage: 'execute', reason: `sandbox_failed: ${HOSTILE}`, debug_rounds: 3, coverage_rounds: 0, llm_tokens: 5 },
  };
  await store.putRecord('r1', accepted);
  await store.putRecord('r1', rejected);
  await store.updateRun('r1', {
    status: 'finished',
    summary: {
      runId: 'r1',
      repositories: 1,
      functions: 2,
      accepted: 1,
      rejected: 1,
      funnel: { prepare: 2, execute: 2, accepted: 1 },
      rejectedAt: { execute: 1 },
      rounds: { debug: { functions: 1, rounds: 3 }, coverage: { functions: 1, rounds: 1 } },
      skippedRepos: [],
      llm: { total: { calls: 8, cachedCalls: 0, promptTokens: 900, completionTokens: 100, costUsd: 0.01, latencyMs: 0 }, byRepo: {}, byStep: {} },
      regenerations: {
        calls: 2,
        cachedCalls: 0,
        reviewed: 6,
        promptTokens: 240,
        completionTokens: 10,
        costUsd: 0.002,
        latencyMs: 0,
        byCheck: {
          test_calls_target: { calls: 2, cachedCalls: 0, promptTokens: 240, completionTokens: 10, costUsd: 0.002, latencyMs: 0 },
          parse_truncated: { calls: 1, cachedCalls: 0, promptTokens: 120, completionTokens: 5, costUsd: 0.001, latencyMs: 0 },
        },
        byStep: {
          tests: { calls: 2, cachedCalls: 0, reviewed: 4, promptTokens: 240, completionTokens: 10, costUsd: 0.002, latencyMs: 0 },
          sandbox: { calls: 0, cachedCalls: 0, reviewed: 2, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyMs: 0 },
        },
      },
    },
  });
  // An exchange of the rejected function whose recorded body is missing from the artifacts.
  await store.appendExchange({
    exchangeKey: `sha256-${'0'.repeat(64)}`,
    step: 'sandbox',
    model: 'm',
    cached: false,
    promptTokens: 1,
    completionTokens: 1,
    costUsd: 0,
    latencyMs: 1,
    functionId: 'fn2',
    runId: 'r1',
    recordedAt: new Date().toISOString(),
  });
  return { store, outDir };
}

describe('run report', () => {
  it('names a rejection reason by its leading clause', () => {
    expect(reasonKindOf('parse_no_code_block: the answer had none')).toBe('parse_no_code_block');
    expect(reasonKindOf('tests judged incorrect: too weak')).toBe('tests judged incorrect');
    expect(reasonKindOf('x'.repeat(100))).toHaveLength(80);
  });

  it('escapes what runs put in it, and names an exchange it cannot read instead of failing', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-report-'));
    const { store, outDir: runDir } = await storeRun(dataDir);
    const written = await writeRunReport(await StoreRunReader.open(store, 'r1'), runDir);
    expect(written).toMatchObject({ records: 1, rejections: 1, scripts: 1, exchangePages: 2, unreadableExchanges: 1 });
    const html = fs.readFileSync(written.file, 'utf8');
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // Exactly the page's own script; the record's text never reaches a script element.
    expect(html.match(/<script>/g)).toHaveLength(1);
    // The solvability section: the record's solve rate, and the removed assertion, escaped.
    expect(html).toContain('id="solvability"');
    expect(html).toContain('<td class="num">4</td><td class="reason"><code>assert f() == &quot;&lt;img src=x onerror=alert(1)&gt;&quot;</code></td>');
    expect(fs.readFileSync(path.join(runDir, 'report/scripts/fn1.py'), 'utf8')).toContain('</script><script>alert(2)');
    const rejected = fs.readFileSync(path.join(runDir, 'report/exchanges/fn2.html'), 'utf8');
    expect(rejected).toMatch(/1\. exchange sha256-0+ cannot be read: artifact sha256-0+ is missing/);
  });

  it('shows what refused answers cost, by check and by step', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-report-'));
    const { store, outDir: runDir } = await storeRun(dataDir);
    const html = fs.readFileSync((await writeRunReport(await StoreRunReader.open(store, 'r1'), runDir)).file, 'utf8');
    const section = html.slice(html.indexOf('id="regenerations"'), html.indexOf('id="packages"'));
    expect(section).toContain('of 6 reviewed (33.3%)');
    expect(section).toContain('25.0% of the run');
    expect(section).toMatch(/<code>test_calls_target<\/code><\/td><td class="num">2<\/td><td class="num">250<\/td><td class="num">\$0\.002000<\/td>/);
    expect(section).toMatch(/<td>tests<\/td><td class="num">2 \/ 4<\/td><td class="num">50\.0%<\/td>/);
    // Checks with most refusals first.
    expect(section.indexOf('test_calls_target')).toBeLessThan(section.indexOf('parse_truncated'));
  });

  it('shows the settings as a table, the stages that were off as off, and an unpriced model\'s cost as unknown', async () => {
    const config = loadConfig({ env: { OPENAI_MODEL: 'qwen2.5-coder:7b' } });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-report-'));
    const { store, outDir: runDir } = await storeRun(dataDir, { ...runSettingsFrom(config), pipeline: pipelineSettingsFrom(config) });
    const html = fs.readFileSync((await writeRunReport(await StoreRunReader.open(store, 'r1'), runDir)).file, 'utf8');
    const settings = html.slice(html.indexOf('id="settings"'), html.indexOf('</table>', html.indexOf('id="settings"')));
    expect(settings).toContain('<tr><td><code>debugRounds</code></td><td><code>3</code></td></tr>');
    expect(settings).toContain('<tr><td><code>mutation.enabled</code></td><td><code>false</code></td></tr>');
    expect(html).not.toContain('debugRounds=');
    // Stability and mutation were off (the defaults): shown as off, not as reached.
    expect(html).toContain('stability (off)');
    expect(html).toContain('mutation (off)');
    expect(html).toContain('Off in this run (every function passed them unchecked): stability, mutation.');
    expect(html).not.toContain('solvability (off)');
    const cost = html.slice(html.indexOf('id="cost"'), html.indexOf('id="regenerations"'));
    expect(cost).toContain('$0.0100 + price unknown');
    expect(cost).toContain('no price in llm.prices for qwen2.5-coder:7b');
    const refused = html.slice(html.indexOf('id="regenerations"'), html.indexOf('id="packages"'));
    expect(refused).toContain('$0.002000 + price unknown');
  });

  it('shows the debug and coverage rounds that ran beside the funnel', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-report-'));
    const { store, outDir: runDir } = await storeRun(dataDir);
    const html = fs.readFileSync((await writeRunReport(await StoreRunReader.open(store, 'r1'), runDir)).file, 'utf8');
    const table = html.slice(html.indexOf('id="rounds-ran"'), html.indexOf('</table>', html.indexOf('id="rounds-ran"')));
    expect(table).toContain('<tr><td>debug</td><td class="num">1</td><td class="num">3</td><td class="num">0</td></tr>');
    expect(table).toContain('<tr><td>coverage</td><td class="num">1</td><td class="num">1</td><td class="num">0</td></tr>');
  });

  it("shows the target-length distribution beside RepoST's published evaluation set and the paper's averages", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-report-'));
    const { store, outDir: runDir } = await storeRun(dataDir);
    const html = fs.readFileSync((await writeRunReport(await StoreRunReader.open(store, 'r1'), runDir)).file, 'utf8');
    const chart = html.slice(html.indexOf('data-chart="target-lines"'), html.indexOf('</svg>', html.indexOf('data-chart="target-lines"')));
    // The run's one record (a two-line function) is all in the first bin; RepoST's 296 spread over all.
    expect(chart).toContain('data-series="this run (train)" data-group="1-5" data-value="1"');
    expect(chart).toContain('data-series="RepoST eval (published, 296)" data-group="6-10"');
    const averages = html.slice(html.indexOf('id="target-length-averages"'), html.indexOf('</table>', html.indexOf('id="target-length-averages"')));
    expect(averages).toContain('<td>RepoST eval (paper, Table 4)</td><td class="num">9.9</td>');
    expect(averages).toContain('<td>RepoST train (paper, Table 4)</td><td class="num">12.8</td>');
    expect(averages).toContain('<td>RepoST eval, published set measured here</td><td class="num">10.4</td><td class="num">296</td>');
  });

  it('a run id or folder that names no run is a clear error', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-report-'));
    const store = new LocalStore(dataDir);
    await expect(openRunReader(store, 'nothing')).rejects.toThrow(RunNotFoundError);
    await expect(openRunReader(store, dataDir)).rejects.toThrow(/neither a run id in the store .* nor a run folder/);
    expect(FolderRunReader.open(dataDir)).toBeNull();
    await expect(StoreRunReader.open(store, 'nothing')).rejects.toThrow(/no run nothing in the store/);
  });
});
