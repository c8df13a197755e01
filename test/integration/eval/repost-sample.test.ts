/**
 * The evaluation workflow on RepoST's 40 published sample records, through the real Temporal
 * server, sandbox and HTTP: a scripted model answering each function's ground truth passes
 * everywhere (packages installed through the executor's install path), one answering
 * `return None` fails wherever the tests can tell.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEvalDataset } from '../../../activities/eval/dataset';
import { parseEvalLines } from '../../../activities/eval/run-files';
import type { EvalSummary } from '../../../activities/eval/summary';
import { runEval } from '../../../scripts/lib/eval-run';
import { fenced, returnNone, returnsValue, rulesFor } from '../../support/eval-scripts';
import { startTestFactory, type TestFactory } from '../../support/factory';
import { REPOST_SAMPLE } from '../../support/fixtures';

const records = parseEvalDataset(fs.readFileSync(REPOST_SAMPLE, 'utf8'));

describe('evaluating RepoST sample records', () => {
  let factory: TestFactory;
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-eval-sample-'));

  beforeAll(async () => {
    // First request per function: the ground truth; second: `return None` (scripted answers).
    factory = await startTestFactory({ rules: rulesFor('solve', records, (r) => [fenced(r.origFunc), fenced(returnNone(r.origFunc))]) }, { workers: { sandboxConcurrency: 2 } });
  });

  afterAll(async () => {
    await factory?.close();
  });

  const run = async (model: string) => {
    // Distinct model names: the answer cache is keyed by model, and the two runs ask the same prompts.
    const done = await runEval({ config: factory.config, client: factory.client, datasetFile: REPOST_SAMPLE, settings: { model, n: 1, functionWindow: 8 }, outDir: path.join(out, model) });
    const lines = parseEvalLines(fs.readFileSync(path.join(done.outDir, 'eval.jsonl'), 'utf8'));
    const summary = JSON.parse(fs.readFileSync(path.join(done.outDir, 'eval-summary.json'), 'utf8')) as EvalSummary;
    return { done, lines, summary };
  };

  test('ground truth: Pass@1 100% wherever the packages install; return None: 0% wherever the tests can tell', async () => {
    const truth = await run('scripted-ground-truth');
    expect(truth.done.errors).toBe(0);
    expect(truth.lines).toHaveLength(40);
    // Nothing may fail except for a package that could not be installed.
    const failing = truth.lines.filter((l) => !l.samples[0]!.rounds[0]!.passed);
    for (const l of failing) expect({ idx: l.idx, exception: l.samples[0]!.rounds[0]!.exception_type }).toEqual({ idx: l.idx, exception: 'ModuleNotFoundError' });
    expect(failing).toEqual([]);
    expect(truth.summary.passAtK['pass@1']).toBe(1);
    // The prompt went through the gateway once per function, with the solve step and model.
    const asked = factory.llm.requests.filter((r) => r.kind === 'solve');
    expect(asked).toHaveLength(40);
    expect(new Set(asked.map((r) => r.model))).toEqual(new Set(['scripted-ground-truth']));
    // No ground truth body in any prompt: the target's body line is replaced by the placeholder.
    for (const r of asked) expect(r.messages[1]!.content).toContain('...  # the body to implement');

    const none = await run('scripted-return-none');
    expect(none.lines).toHaveLength(40);
    const byIdx = new Map(records.map((r) => [r.idx, r]));
    const valueReturning = none.lines.filter((l) => returnsValue(byIdx.get(l.idx)!.origFunc));
    // Every function that gives back a value fails with `return None`.
    for (const l of valueReturning) expect({ idx: l.idx, passed: l.samples[0]!.rounds[0]!.passed }).toEqual({ idx: l.idx, passed: false });
    expect(valueReturning.length).toBeGreaterThanOrEqual(30);
    // Those that pass are procedures whose tests do not check every effect.
    for (const l of none.lines.filter((x) => x.samples[0]!.rounds[0]!.passed)) expect(returnsValue(byIdx.get(l.idx)!.origFunc)).toBe(false);
    expect(none.summary.failureKinds.initial.assertion + none.summary.failureKinds.initial.exception).toBe(none.lines.filter((x) => !x.samples[0]!.rounds[0]!.passed).length);
    expect(none.summary.passAtK['pass@1']).toBeLessThan(0.2);
  });
});
