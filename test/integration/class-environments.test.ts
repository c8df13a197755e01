/**
 * Class environments end to end on the real components: classWorkflow children of the crawl's
 * repository workflows on the Temporal dev server, the class steps through the real `openai`
 * client against scripted LLM responses (fixtures: the demo's for `Tally`, the class-environment
 * fixture's for `Shelf`), every script run in a real container.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { ClassDatasetRecordSchema, RejectionSchema } from '../../activities/store/records';
import { loadLlmScript } from '../../scripts/scripted-llm/server';
import { runCrawl } from '../../scripts/lib/crawl';
import { startClassEval } from '../../scripts/lib/class-eval';
import type { ClassEvalResult, ClassEvalSummary } from '../../activities/eval/class-eval';
import { requireEnv, startTestFactory, type TestFactory } from '../support/factory';

const ROOT = path.resolve(__dirname, '../..');
const DEMO_REPO = path.join(ROOT, 'scripts/demo/example-repo');
const SHELF_REPO = path.join(ROOT, 'test/fixtures/repos/shelf');
const DEMO_SCRIPTED_RESPONSES = path.join(ROOT, 'scripts/demo/scripted-llm-responses.json');
const CLASS_SCRIPTED_RESPONSES = path.join(ROOT, 'test/fixtures/scripted-llm/class-environments.json');
const ONE_WRONG_METHOD_SCRIPTED_RESPONSES = path.join(ROOT, 'test/fixtures/scripted-llm/class-solve-one-wrong-method.json');
const REPAIR_ROUND_SCRIPTED_RESPONSES = path.join(ROOT, 'test/fixtures/scripted-llm/class-eval-repair-round.json');

function readJsonl(file: string): unknown[] {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('classWorkflow: a class environment through the function pipeline stages', () => {
  let factory: TestFactory;
  beforeAll(async () => {
    const scripted = { rules: [...loadLlmScript(DEMO_SCRIPTED_RESPONSES).rules, ...loadLlmScript(CLASS_SCRIPTED_RESPONSES).rules, ...loadLlmScript(REPAIR_ROUND_SCRIPTED_RESPONSES).rules] };
    // The test-strength stages on, with no minimum to reach: a class is scored and checked for stability like a function.
    // The scripted model has a price, so the class evaluation's cost is counted.
    factory = await startTestFactory(scripted, {
      crawl: { targets: 'classes' },
      loops: { mutation: { enabled: true, minScore: { train: 0 } }, stability: { runs: { train: 2, eval: 2 } } },
      llm: { prices: { 'scripted-test': { inputPerMTok: 1, outputPerMTok: 2 } } },
    });
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('accepts Tally after a debug round and a coverage round, and rejects Shelf, whose copy diverges, at the functionality check', async () => {
    const sources = [
      { kind: 'local' as const, path: DEMO_REPO, name: 'textkit' },
      { kind: 'local' as const, path: SHELF_REPO, name: 'shelf' },
    ];
    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources, runId: 'it-cls' });
    // A crawl of classes only: no function was tried.
    expect(summary.functions).toBe(0);
    const file = JSON.parse(fs.readFileSync(path.join(summary.outDir, 'summary.json'), 'utf8'));
    expect(file.classes).toMatchObject({ classes: 2, accepted: 1, rejected: 1, rejectedAt: { functionality_check: 1 } });
    // The class filters, each a named rule with its count: Interval (two methods) is dropped by `methods`.
    expect(file.classes.selection).toMatchObject({ found: 3, kept: 2, sampled: 2 });
    expect(file.classes.selection.droppedBy).toMatchObject({ methods: 1, 'test-class': 0, 'abstract-only': 0, size: 0, keywords: 0 });
    // Both reached the final checks; only Tally got past the functionality check.
    expect(file.classes.funnel).toMatchObject({ execute: 2, coverage: 2, ast_check: 2, test_check: 1, accepted: 1 });
    expect(file.missingRecords).toBe(0);

    const records = readJsonl(path.join(summary.outDir, 'classes-dataset.jsonl')).map((r) => ClassDatasetRecordSchema.parse(r));
    expect(records).toHaveLength(1);
    const tally = records[0]!;
    expect(tally).toMatchObject({ class_name: 'Tally', class_path: 'textkit/tally.py', repo_name: 'textkit', debug_rounds: 1, coverage_rounds: 1, sandbox_ast_check: true, test_correctness_check: 'yes', split: 'train' });
    expect(tally.sandbox_functionality_check).toBeNull();
    expect(tally.test_functions).toEqual(['test_Tally_add_and_count', 'test_Tally_case_sensitive', 'test_Tally_most_common_and_remove']);
    expect(tally.methods).toEqual(['__init__', 'add', 'count', 'most_common', 'remove']);
    // Coverage over all the methods, and each method's own: the coverage round reached every branch.
    expect(tally.coverage_rate).toBe(1);
    expect(tally.method_coverage.map((m) => m.method)).toEqual(tally.methods);
    for (const m of tally.method_coverage) expect(m.rate).toBe(1);
    expect(tally.coverage_report).toContain('Per method:');
    // The context holds what the class uses from another file; the record carries the corpus's facts.
    expect(tally.orig_context).toContain('## textkit/clean.py');
    expect(tally.orig_class.startsWith('class Tally:')).toBe(true);
    expect(tally.documentation_level).toBe('partial');
    expect(tally.class_skeleton).toContain('def most_common(self):');
    expect(tally.metrics.methods).toBe(5);
    // Test strength: mutants of the class's methods, each placed in the whole class copied in; the verdict held over two runs.
    expect(tally.mutants!.made).toBeGreaterThan(5);
    expect(tally.mutants!.killed).toBeGreaterThan(0);
    expect(tally.mutation_score).toBeCloseTo(tally.mutants!.killed / (tally.mutants!.killed + tally.mutants!.survived), 6);
    expect(tally.mutation_rounds).toBe(0);
    expect(tally.stability).toBe('stable');
    expect(tally.prompt_versions).toMatchObject({ sandbox: expect.stringMatching(/^class_sandbox@/), debug: expect.stringMatching(/^class_debug@/), coverage: expect.stringMatching(/^class_coverage@/) });

    const rejections = readJsonl(path.join(summary.outDir, 'classes-rejections.jsonl')).map((r) => RejectionSchema.parse(r));
    expect(rejections).toHaveLength(1);
    expect(rejections[0]).toMatchObject({ qualname: 'Shelf', stage: 'functionality_check', debug_rounds: 0 });
    expect(rejections[0]!.reason).toContain('quantity');
    // The report has a class section: the filters' counts, and each class environment, accepted or rejected.
    const report = fs.readFileSync(summary.reportFile, 'utf8');
    expect(report).toContain('<h2 id="classes">Class environments</h2>');
    expect(report).toContain('<tr><td><code>methods</code></td><td class="num">1</td></tr>');
    expect(report).toContain('<code>textkit/tally.py::Tally</code>');
    expect(report).toMatch(/<code>shelf\/stock\.py::Shelf<\/code><\/td><td>train<\/td><td>functionality_check<\/td>/);
    // The function files stay the functions' own.
    expect(fs.readFileSync(summary.datasetFile, 'utf8')).toBe('');

    // Each class ran as a classWorkflow, named after its repository and class.
    const listed: string[] = [];
    for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "it-cls" AND WorkflowType = "classWorkflow"` })) listed.push(wf.workflowId);
    expect(listed.map((id) => id.replace(/\/[0-9a-f]{16}$/, '')).sort()).toEqual(['it-cls/class/shelf/Shelf', 'it-cls/class/textkit/Tally']);
    // The class steps asked the class prompts: one debug and one coverage call.
    const kinds = factory.llm.requests.filter((r) => r.functionName === 'Tally').map((r) => r.kind);
    expect(kinds.filter((k) => k === 'class_debug')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'class_coverage')).toHaveLength(1);
  });

  /** `eval.ts --classes` in its own process on the accepted record; its files as written. */
  async function evalClasses(name: string, args: string[]): Promise<{ stdout: string; results: ClassEvalResult[]; summary: ClassEvalSummary }> {
    const out = path.join(factory.dataDir, 'class-evals', name);
    const dataset = path.join(factory.dataDir, 'runs', 'it-cls', 'classes-dataset.jsonl');
    const { stdout } = await promisify(execFile)(process.execPath, ['-r', 'tsx/cjs', 'scripts/eval.ts', '--classes', '--dataset', dataset, '--out', out, ...args], {
      cwd: ROOT,
      env: { ...process.env, REPOST_DATA_DIR: factory.dataDir, REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE') },
      maxBuffer: 16 * 1024 * 1024,
    });
    const results = readJsonl(path.join(out, 'class-eval.jsonl')) as ClassEvalResult[];
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'class-eval-summary.json'), 'utf8')) as ClassEvalSummary;
    return { stdout, results, summary };
  }

  it('eval.ts --classes scores the ground truth 1.0 on the tests and on every similarity measure', async () => {
    const { results, summary, stdout } = await evalClasses('ground-truth', ['--ground-truth']);
    expect(results).toHaveLength(1);
    const sample = results[0]!.samples[0]!;
    expect(sample.tests.map((t) => [t.test, t.passed])).toEqual([
      ['test_Tally_add_and_count', true],
      ['test_Tally_case_sensitive', true],
      ['test_Tally_most_common_and_remove', true],
    ]);
    expect(sample).toMatchObject({ passed: true, passRate: 1, similarity: { bleu: 1, rougeL: 1, tsed: 1 } });
    expect(summary.overall).toMatchObject({ classes: 1, passAtK: { 'pass@1': 1 }, testPassRate: 1, bleu: 1, rougeL: 1, tsed: 1 });
    expect(summary.byDocumentation.partial).toMatchObject({ classes: 1, testPassRate: 1 });
    expect(summary.byMetricQuartile.map((q) => q.metric)).toContain('cyclomatic_total');
    expect(stdout).toContain('pass@1 1.000; per-test pass rate 1.000');
  });

  it('eval.ts --classes shows a class with one wrong method in its per-test pass rate', async () => {
    // The scripted answer's `count` does not lower-case the word it looks up: only the test that counts case-insensitively fails.
    const { results, summary, stdout } = await evalClasses('one-wrong-method', ['--scripted', ONE_WRONG_METHOD_SCRIPTED_RESPONSES]);
    const sample = results[0]!.samples[0]!;
    expect(sample.tests.map((t) => [t.test, t.passed, t.failure])).toEqual([
      ['test_Tally_add_and_count', false, 'AssertionError'],
      ['test_Tally_case_sensitive', true, null],
      ['test_Tally_most_common_and_remove', true, null],
    ]);
    // The failed test names its assertion as a function's evaluation does: the line of the script that ran, its source and the values
    // compared (`b` holds the answer's class, so its side is "got").
    const assertion = /^AssertionError at line \d+ in test_Tally_add_and_count: assert a\.count\("THE"\) == b\.count\("THE"\) \(expected 2, got 0\)$/;
    expect(sample.tests[0]!.assertion).toMatch(assertion);
    expect(sample.tests[1]!.assertion).toBeUndefined();
    expect(stdout).toContain(`Tally (sample 0, 2/3 test(s) passed): test_Tally_add_and_count: ${sample.tests[0]!.assertion}`);
    expect(sample.passed).toBe(false);
    expect(sample.passRate).toBeCloseTo(2 / 3, 10);
    expect(summary.overall.passAtK['pass@1']).toBe(0);
    expect(summary.overall.testPassRate).toBeCloseTo(0.6667, 4);
    // Close to the original, not equal to it.
    expect(sample.similarity!.bleu).toBeGreaterThan(0.8);
    expect(sample.similarity!.bleu).toBeLessThan(1);
    expect(sample.similarity!.tsed).toBeLessThan(1);
  });

  it('class evaluation runs as a workflow through the gateway: a repair round, exchanges recorded, cost counted, answers cached on a second run', async () => {
    const dataset = path.join(factory.dataDir, 'runs', 'it-cls', 'classes-dataset.jsonl');
    const evalOnce = async (name: string) => {
      const started = await startClassEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile: dataset, settings: { repairRounds: 1 }, groundTruth: false, outDir: path.join(factory.dataDir, 'class-evals', name), runId: `it-cls-${name}` });
      return started.result();
    };
    const before = factory.llm.requests.length;
    const first = await evalOnce('repair-1');
    // The fixture's first answer fails one test; its failure went back to the model, whose repair passes every test.
    expect(factory.llm.requests.slice(before).map((r) => [r.kind, r.functionName])).toEqual([
      ['class_solve', 'Tally'],
      ['class_repair', 'Tally'],
    ]);
    const repairPrompt = factory.llm.requests[before + 1]!.messages.map((m) => m.content).join('\n');
    expect(repairPrompt).toMatch(/test_Tally_add_and_count: failed \(AssertionError at line \d+ in test_Tally_add_and_count: assert a\.count\("THE"\) == b\.count\("THE"\) \(expected 2, got 0\)\)/);
    expect(repairPrompt).toContain('test_Tally_case_sensitive: passed');
    const [line] = first.results;
    const sample = line!.samples[0]!;
    expect(sample).toMatchObject({ passed: false, passedTests: 2 });
    expect(sample.repairs).toHaveLength(1);
    expect(sample.repairs![0]).toMatchObject({ round: 1, passed: true, passedTests: 3, passRate: 1, error: null });
    expect(sample.repairs![0]!.similarity!.bleu).toBeGreaterThan(sample.similarity!.bleu);
    // Pass@k of the first answers, then after the repair round.
    expect(first.summary.overall.passAtK['pass@1']).toBe(0);
    expect(first.summary.passAtKByRound.map((r) => r['pass@1'])).toEqual([0, 1]);
    // Both calls counted, with tokens and a cost; the class's line carries the same.
    expect(first.summary.usage).toMatchObject({ calls: 2, cachedCalls: 0 });
    expect(first.summary.usage.promptTokens).toBeGreaterThan(0);
    expect(first.summary.usage.costUsd).toBeGreaterThan(0);
    expect(line!.usage).toEqual(first.summary.usage);
    expect(sample.usage).toEqual(first.summary.usage);
    // Each call is an exchange of the run.
    const steps: string[] = [];
    for await (const e of factory.store.listRunExchanges(first.runId)) steps.push(e.step);
    expect(steps.sort()).toEqual(['class_repair', 'class_solve']);
    // One workflow per class, under the run's workflow.
    const listed: string[] = [];
    for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "${first.runId}" AND WorkflowType = "evalClassWorkflow"` })) listed.push(wf.workflowId);
    expect(listed).toHaveLength(1);

    // The same run again: both answers come from the cache, no request reaches the model, nothing is paid.
    const asked = factory.llm.requests.length;
    const second = await evalOnce('repair-2');
    expect(factory.llm.requests.length).toBe(asked);
    expect(second.summary.usage).toMatchObject({ calls: 2, cachedCalls: 2, costUsd: 0 });
    expect(second.results[0]!.samples[0]!.repairs![0]!.passed).toBe(true);
    expect(second.summary.passAtKByRound).toEqual(first.summary.passAtKByRound);
  });
});
