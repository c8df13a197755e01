/**
 * The evaluation workflow's other paths on a small scripted dataset, through the real Temporal
 * server, sandbox and HTTP:
 *   - failure kinds produced for real (no code, syntax error, assertion, exception, timeout) and
 *     a self-repair round that fixes them;
 *   - dual ranking of five candidates, two right, against candidate tests of which one is wrong:
 *     GenX and CodeT both put a right candidate first;
 *   - GenX-style test augmentation: only inputs the ground truth answers the same way twice are kept.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEvalDataset } from '../../../activities/eval/dataset';
import { parseEvalLines } from '../../../activities/eval/run-files';
import type { EvalSummary } from '../../../activities/eval/summary';
import { runEval } from '../../../scripts/lib/eval-run';
import { evalFunctionWorkflowId } from '../../../workflows/ids';
import { fenced } from '../../support/eval-scripts';
import { startTestFactory, type TestFactory } from '../../support/factory';

const CLAMP = 'def clamp(x, lo, hi):\n    """Limit x to the closed range [lo, hi]."""\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x\n';
const MEAN = 'def mean(values):\n    """The arithmetic mean of a non-empty list of numbers."""\n    return sum(values) / len(values)\n';

function record(name: string, func: string, tests: string[]) {
  const script = `${func}\n\ndef test_${name}():\n${tests.map((t) => `    ${t}`).join('\n')}\n\n\nif __name__ == "__main__":\n    test_${name}()\n`;
  return { func_name: name, idx: name, repo_name: 'scripted/numbers', func_path: 'numbers.py', orig_func: func, orig_context: `## numbers.py\n${func}`, eval_script: script, commit_id: 'scripted' };
}

const DATASET = [
  record('clamp', CLAMP, ['assert clamp(5, 0, 10) == clamp_new_implementation(5, 0, 10)', 'assert clamp(-1, 0, 10) == clamp_new_implementation(-1, 0, 10)', 'assert clamp(11, 0, 10) == clamp_new_implementation(11, 0, 10)', 'assert clamp(10, 0, 10) == clamp_new_implementation(10, 0, 10)']),
  record('mean', MEAN, ['assert mean([1, 2, 3]) == mean_new_implementation([1, 2, 3])', 'assert mean([5]) == mean_new_implementation([5])', 'assert mean([-1, 1]) == mean_new_implementation([-1, 1])']),
];

/** Two right clamps, three wrong ones (scripted answers). */
const CLAMPS = {
  right1: 'def clamp(x, lo, hi):\n    return max(lo, min(x, hi))',
  right2: 'def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    elif x > hi:\n        return hi\n    return x',
  noLow: 'def clamp(x, lo, hi):\n    return min(x, hi)',
  noHigh: 'def clamp(x, lo, hi):\n    return max(lo, x)',
  identity: 'def clamp(x, lo, hi):\n    return x',
};
/** Candidate tests: four right, one wrong (it expects 15 for clamp(15, 0, 10)). */
const CLAMP_TESTS = '```python\nassert clamp(5, 0, 10) == 5\nassert clamp(-3, 0, 10) == 0\nassert clamp(42, 0, 10) == 10\nassert clamp(0, 0, 10) == 0\nassert clamp(15, 0, 10) == 15\n```';

/** One answer of each failure kind (scripted). */
const MEANS = [
  "I'd rather not write this one.",
  fenced('def mean(values):\n    return sum(values) / len(values'),
  fenced('def mean(values):\n    return sum(values)'),
  fenced('def mean(values):\n    return values.mean()'),
  fenced('def mean(values):\n    while True:\n        pass'),
];

const AUGMENT_INPUTS = [
  '```python',
  '# case',
  'clamp(5, 0, 10)',
  '# case',
  'v = -7',
  'clamp(v, 0, 10)',
  '# case',
  'import random',
  'clamp(random.random(), 0, 10)',
  '# case',
  'clamp(None, 0, 10)',
  '# case',
  'clamp(10, 0, 10)',
  '```',
].join('\n');

describe('ranking, self-repair and augmentation', () => {
  let factory: TestFactory;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-eval-rank-'));
  const datasetFile = path.join(dir, 'dataset.jsonl');
  fs.writeFileSync(datasetFile, DATASET.map((r) => JSON.stringify(r)).join('\n') + '\n');

  beforeAll(async () => {
    factory = await startTestFactory(
      {
        rules: [
          { kind: 'solve', functionName: 'clamp', responses: Object.values(CLAMPS).map(fenced) },
          { kind: 'candidate_tests', functionName: 'clamp', responses: [CLAMP_TESTS] },
          { kind: 'repair', functionName: 'clamp', responses: [fenced(CLAMPS.right1)] },
          { kind: 'solve', functionName: 'mean', responses: MEANS },
          { kind: 'candidate_tests', functionName: 'mean', responses: ['```python\nassert mean([2, 4]) == 3\nassert mean([7]) == 7\n```'] },
          { kind: 'repair', functionName: 'mean', responses: [fenced(MEAN)] },
          { kind: 'test_inputs', functionName: 'clamp', responses: [AUGMENT_INPUTS] },
          // An endpoint that refuses the request for good (scripted fault): always, or on the second sample.
          { kind: 'solve', functionName: 'refused', responses: [{ fault: '400' }] },
          { kind: 'solve', functionName: 'partly', responses: [fenced(MEAN.replace(/mean/g, 'partly')), { fault: '400' }] },
        ],
      },
      { workers: { sandboxConcurrency: 2 } },
    );
  });

  afterAll(async () => {
    await factory?.close();
  });

  test('failure kinds, one repair round, and GenX/CodeT ranking with a wrong test', async () => {
    const done = await runEval({
      config: factory.config,
      client: factory.client,
      store: factory.store,
      datasetFile,
      settings: { model: 'scripted-rank', n: 5, ks: [1, 5], repairRounds: 1, select: 'genx', testSamples: 1, timeoutSec: 3, testTimeoutSec: 2 },
      outDir: path.join(dir, 'eval'),
    });
    expect(done.errors).toBe(0);
    const lines = parseEvalLines(fs.readFileSync(path.join(done.outDir, 'eval.jsonl'), 'utf8'));
    const [clamp, mean] = [lines.find((l) => l.func_name === 'clamp')!, lines.find((l) => l.func_name === 'mean')!];

    // Every failure kind, produced by running the answers for real; all fixed in one repair round.
    const kinds = mean.samples.map((s) => s.rounds[0]!.kind).sort();
    expect(kinds).toEqual(['assertion', 'exception', 'no_code', 'syntax_error', 'timeout']);
    expect(mean.samples.find((s) => s.rounds[0]!.kind === 'exception')!.rounds[0]!.exception_type).toBe('AttributeError');
    expect(mean.samples.map((s) => s.rounds.map((r) => r.passed))).toEqual(Array.from({ length: 5 }, () => [false, true]));
    expect(mean.passed_per_round).toEqual([0, 5]);
    // The repair prompt quoted the failure.
    const repairs = factory.llm.requests.filter((r) => r.kind === 'repair' && r.functionName === 'mean');
    expect(repairs).toHaveLength(5);
    expect(repairs.some((r) => r.messages[1]!.content.includes('AttributeError'))).toBe(true);
    expect(repairs.some((r) => r.messages[1]!.content.includes('no code block'))).toBe(true);

    // Two of five clamps pass the hidden tests; the ranking never saw them, the tests include a wrong one.
    expect(clamp.passed_per_round).toEqual([2, 5]);
    const ranking = clamp.ranking!;
    expect(ranking.tests).toBe(5);
    expect(ranking.testsTruthPasses).toBe(4);
    const rightFirst = (top: number | null) => clamp.samples[top!]!.rounds[0]!.passed;
    expect(rightFirst(ranking.methods.genx.top)).toBe(true);
    expect(rightFirst(ranking.methods.codet.top)).toBe(true);
    expect(ranking.methods.genx.hitAtK['n@1']).toBe(1);
    expect(ranking.methods.codet.hitAtK['n@1']).toBe(1);
    expect(ranking.methods.random.hitAtK['n@1']).toBeCloseTo(0.4, 12);
    // The wrong test is ranked below the four right ones by both methods.
    expect(ranking.methods.genx.precisionAtK['Pr@1']).toBe(1);
    expect(ranking.methods.codet.precisionAtK['Pr@1']).toBe(1);

    const summary = JSON.parse(fs.readFileSync(path.join(done.outDir, 'eval-summary.json'), 'utf8')) as EvalSummary;
    expect(summary.passAtK['pass@1']).toBeCloseTo((2 / 5 + 0) / 2, 12);
    expect(summary.passAtKByRound[1]!['pass@1']).toBe(1);
    expect(summary.failureKinds.initial).toEqual({ no_code: 1, syntax_error: 1, assertion: 1 + 3, exception: 1, timeout: 1, candidate_exit: 0, forbidden_value: 0, protocol: 0, wrong_type: 0, harness: 0 });
    expect(summary.ranking!.selected).toBe('genx');
    expect(summary.ranking!.methods.genx!.hitAtK['n@1']).toBeGreaterThan(summary.ranking!.methods.random!.hitAtK['n@1']!);
    expect(summary.usage.byStep.candidate_tests!.calls).toBe(2);
    expect(fs.readFileSync(path.join(done.outDir, 'eval-report.html'), 'utf8')).toContain('data-chart="ranking-hit-0"');
  });

  test('augmentation keeps only the inputs the ground truth answers the same way in every run', async () => {
    const done = await runEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile, settings: { task: 'augment', model: 'scripted-augment' }, limit: 1, outDir: path.join(dir, 'augment') });
    expect(done.errors).toBe(0);
    const [line] = parseEvalLines(fs.readFileSync(path.join(done.outDir, 'eval.jsonl'), 'utf8'));
    // Five proposed: the random one differs between runs, the None one raises; three are kept.
    expect(line!.augmentation).toMatchObject({ proposed: 5, kept: 3 });
    expect(line!.augmentation!.scriptKey).not.toBeNull();
    const [augmented] = fs.readFileSync(path.join(done.outDir, 'dataset.augmented.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(augmented!.augmented_inputs).toBe(3);
    const script = String(augmented!.eval_script);
    expect(script).toContain('("v = -7\\nclamp(v, 0, 10)", "0"),');
    expect(script).not.toContain('random');
    expect(script).toContain('    test_clamp_augmented()\n    test_clamp()');
    // Every field of the original line is kept.
    expect(augmented!.commit_id).toBe('scripted');
  });

  test('failures end a sample, a function or a function workflow, each recorded with its reason; the run continues as new and finalizes', async () => {
    const faulty = path.join(dir, 'faulty.jsonl');
    const rows = [
      record('refused', MEAN.replace(/mean/g, 'refused'), ['assert refused([1]) == refused_new_implementation([1])']),
      record('partly', MEAN.replace(/mean/g, 'partly'), ['assert partly([1, 3]) == partly_new_implementation([1, 3])']),
      DATASET[0]!,
    ];
    fs.writeFileSync(faulty, rows.map((r) => JSON.stringify(r)).join('\n'));
    // clamp's function workflow cannot start: its id is taken by a workflow no worker serves.
    const runId = `faulty-${Date.now().toString(36)}`;
    const clamp = parseEvalDataset(JSON.stringify(DATASET[0])).at(0)!;
    const squatter = await factory.client.workflow.start('evalFunctionWorkflow', { workflowId: evalFunctionWorkflowId(runId, 'eval', clamp), taskQueue: `nobody-polls-${runId}`, args: [] });
    try {
      const done = await runEval({
        config: factory.config,
        client: factory.client,
        store: factory.store,
        datasetFile: faulty,
        settings: { model: 'scripted-faults', n: 2, ks: [1], timeoutSec: 3, continueAsNewAfter: 1 },
        runId,
        outDir: path.join(dir, 'faulty'),
      });
      expect(done.functions).toBe(3);
      expect(done.errors).toBe(2);
      const lines = parseEvalLines(fs.readFileSync(path.join(done.outDir, 'eval.jsonl'), 'utf8'));
      const by = (name: string) => lines.find((l) => l.func_name === name)!;
      // Both samples refused: the function could not be evaluated.
      expect(by('refused').error).toMatch(/^no sample could be evaluated: activity sampleCandidate failed: LlmPermanentError: .*400/);
      // One sample refused: the other one's result is kept and counted alone.
      expect(by('partly')).toMatchObject({ error: null, n: 1, passed_per_round: [1], pass_at_k: { 'pass@1': 1 } });
      expect(by('partly').step_errors).toEqual([expect.stringMatching(/^sample [01]: activity sampleCandidate failed: LlmPermanentError: .*400/)]);
      // The workflow that could not start is a recorded result too.
      expect(by('clamp').error).toMatch(/^the function's workflow failed: .*(already started|duplicate)/i);
      const summary = JSON.parse(fs.readFileSync(path.join(done.outDir, 'eval-summary.json'), 'utf8')) as EvalSummary;
      // Pass@k is over the functions that could be evaluated.
      expect(summary).toMatchObject({ functions: 3, evaluated: 1, errorCount: 2, stepErrorCount: 1, missing: 0 });
      expect(summary.passAtK['pass@1']).toBe(1);
      // One function per page and continue-as-new after each: three runs of the workflow.
      const runs = [];
      for await (const wf of factory.client.workflow.list({ query: `WorkflowId = "${runId}/eval"` })) runs.push(wf.runId);
      expect(runs).toHaveLength(3);
    } finally {
      await squatter.terminate();
    }
  });
});
