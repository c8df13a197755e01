import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { appendExchangeIndex } from '../../../activities/llm/exchange';
import { LocalRunReader, RunNotFoundError } from '../../../activities/dataset/run-reader';
import { reasonKindOf } from '../../../activities/report/report-data';
import { writeRunReport } from '../../../activities/report/write-report';

const HOSTILE = '<img src=x onerror=alert(1)>';

/** A finished run folder with one accepted and one rejected function, written as the crawl writes them. */
function writeRun(dataDir: string): string {
  const runDir = path.join(dataDir, 'runs', 'r1');
  fs.mkdirSync(runDir, { recursive: true });
  const record = {
    func_name: 'f',
    idx: 'fn1',
    repo_name: 'o/r',
    func_path: 'm.py',
    orig_func: 'def f():\n    return 1\n',
    orig_context: '',
    eval_script: 'def f():\n    return "</script><script>alert(2)</script>"\n\ndef test_f():\n    assert f() == f_new_implementation()\n',
    coverage_rate: 0.5,
    coverage_report: '',
    sandbox_ast_check: true,
    sandbox_functionality_check: null,
    test_correctness_check: 'yes',
    commit_id: 'c',
    qualname: HOSTILE,
    function_id: 'fn1',
    run_id: 'r1',
    standalone: true,
    packages: [{ name: 'numpy', version: '2.0.0' }],
    prompt_versions: {},
    debug_rounds: 0,
    coverage_rounds: 1,
    llm_tokens: 10,
  };
  const rejection = { function_id: 'fn2', repo_name: 'o/r', func_path: 'm.py', qualname: 'g', stage: 'execute', reason: `sandbox_failed: ${HOSTILE}`, debug_rounds: 3, coverage_rounds: 0, llm_tokens: 5 };
  fs.writeFileSync(path.join(runDir, 'dataset.jsonl'), JSON.stringify(record) + '\n');
  fs.writeFileSync(path.join(runDir, 'rejections.jsonl'), JSON.stringify(rejection) + '\n');
  fs.writeFileSync(
    path.join(runDir, 'summary.json'),
    JSON.stringify({ runId: 'r1', repositories: 1, functions: 2, accepted: 1, rejected: 1, funnel: { prepare: 2, execute: 2, accepted: 1 }, rejectedAt: { execute: 1 }, skippedRepos: [] }),
  );
  return runDir;
}

describe('run report', () => {
  it('names a rejection reason by its leading clause', () => {
    expect(reasonKindOf('parse_no_code_block: the answer had none')).toBe('parse_no_code_block');
    expect(reasonKindOf('tests judged incorrect: too weak')).toBe('tests judged incorrect');
    expect(reasonKindOf('x'.repeat(100))).toHaveLength(80);
  });

  it('escapes what runs put in it, and names an exchange it cannot read instead of failing', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-report-'));
    const runDir = writeRun(dataDir);
    // An index entry whose recorded exchange is missing from the artifact store.
    await appendExchangeIndex(dataDir, {
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
    const written = await writeRunReport(LocalRunReader.open('r1', dataDir), runDir);
    expect(written).toMatchObject({ records: 1, rejections: 1, scripts: 1, exchangePages: 2, unreadableExchanges: 1 });
    const html = fs.readFileSync(written.file, 'utf8');
    expect(html).not.toContain(HOSTILE);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // Exactly the page's own script; the record's text never reaches a script element.
    expect(html.match(/<script>/g)).toHaveLength(1);
    expect(fs.readFileSync(path.join(runDir, 'report/scripts/fn1.py'), 'utf8')).toContain('</script><script>alert(2)');
    const rejected = fs.readFileSync(path.join(runDir, 'report/exchanges/fn2.html'), 'utf8');
    expect(rejected).toMatch(/1\. exchange sha256-0+ cannot be read: artifact sha256-0+ is missing/);
  });

  it('a run that has not finished, or is not there, is a clear error', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-report-'));
    fs.mkdirSync(path.join(dataDir, 'runs', 'started'), { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'runs', 'started', 'run.json'), '{"runId":"started"}');
    expect(() => LocalRunReader.open('started', dataDir)).toThrow(/has no summary\.json: the run has not finished/);
    expect(() => LocalRunReader.open('nothing', dataDir)).toThrow(RunNotFoundError);
  });
});
