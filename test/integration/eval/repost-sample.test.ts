/**
 * The evaluation workflow on RepoST's 40 published sample records, through the real Temporal
 * server, sandbox and HTTP, in one run of two samples per function (one after the other): a
 * scripted model answers each function's ground truth first, which passes everywhere (packages
 * installed through the executor's install path), and `return None` second, which fails wherever
 * the tests can tell.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEvalDataset } from '../../../activities/eval/dataset';
import { passAtK } from '../../../activities/eval/pass-at-k';
import { parseEvalLines } from '../../../activities/eval/run-files';
import { runEval } from '../../../scripts/lib/eval-run';
import { fenced, returnNone, returnsValue, rulesFor } from '../../support/eval-scripts';
import { startTestFactory, type TestFactory } from '../../support/factory';
import { SHARED_UV_CACHE } from '../sandbox/sandbox-env';
import { REPOST_SAMPLE } from '../../support/fixtures';

const records = parseEvalDataset(fs.readFileSync(REPOST_SAMPLE, 'utf8'));

describe('evaluating RepoST sample records', () => {
  let factory: TestFactory;
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-eval-sample-'));

  beforeAll(async () => {
    // First request per function: the ground truth; second: `return None` (scripted answers). An
    // empty package store; wheels come from the uv cache the sandbox tests share on this machine.
    factory = await startTestFactory(
      { rules: rulesFor('solve', records, (r) => [fenced(r.origFunc), fenced(returnNone(r.origFunc))]) },
      { workers: { sandboxConcurrency: 2 }, sandbox: { packages: { uvCacheDir: SHARED_UV_CACHE } } },
    );
  });

  afterAll(async () => {
    await factory?.close();
  });

  test('ground truth: Pass@1 100% wherever the packages install; return None: 0% wherever the tests can tell', async () => {
    // One sample at a time per function, so the first answer is always the ground truth.
    const done = await runEval({
      config: factory.config,
      client: factory.client,
      store: factory.store,
      datasetFile: REPOST_SAMPLE,
      settings: { model: 'scripted-sample', n: 2, ks: [1, 2], sampleWindow: 1, functionWindow: 8 },
      outDir: path.join(out, 'run'),
    });
    expect(done.errors).toBe(0);
    const lines = parseEvalLines(fs.readFileSync(path.join(done.outDir, 'eval.jsonl'), 'utf8'));
    expect(lines).toHaveLength(40);
    const outcome = (l: (typeof lines)[number], sample: number) => l.samples.find((s) => s.sample === sample)!.rounds[0]!;

    // Ground truth (sample 0): nothing may fail, except for a package that could not be installed.
    const failing = lines.filter((l) => !outcome(l, 0).passed);
    for (const l of failing) expect({ idx: l.idx, exception: outcome(l, 0).exception_type }).toEqual({ idx: l.idx, exception: 'ModuleNotFoundError' });
    expect(failing).toEqual([]);
    // Its Pass@1, by the unbiased estimator over the first answers alone: 100%.
    expect(lines.reduce((sum, l) => sum + passAtK(1, outcome(l, 0).passed ? 1 : 0, 1), 0) / lines.length).toBe(1);

    // `return None` (sample 1): every function that gives back a value fails.
    const byIdx = new Map(records.map((r) => [r.idx, r]));
    const valueReturning = lines.filter((l) => returnsValue(byIdx.get(l.idx)!.origFunc));
    for (const l of valueReturning) expect({ idx: l.idx, passed: outcome(l, 1).passed }).toEqual({ idx: l.idx, passed: false });
    expect(valueReturning.length).toBeGreaterThanOrEqual(30);
    // Those that pass are procedures whose tests do not check every effect.
    const nonePassing = lines.filter((l) => outcome(l, 1).passed);
    for (const l of nonePassing) expect(returnsValue(byIdx.get(l.idx)!.origFunc)).toBe(false);
    const pNone = nonePassing.length / lines.length;
    expect(pNone).toBeLessThan(0.2);

    // The run's numbers, by the unbiased estimator with n = 2: c = 1 + (return None passed).
    const summary = done.summary;
    expect(summary.passAtK['pass@2']).toBe(1);
    expect(summary.passAtK['pass@1']).toBeCloseTo((1 + pNone) / 2, 12);
    expect(summary.failureKinds.initial.assertion + summary.failureKinds.initial.exception).toBe(lines.length - nonePassing.length);

    // The prompt went through the gateway twice per function, with the solve step and the run's model.
    const asked = factory.llm.requests.filter((r) => r.kind === 'solve');
    expect(asked).toHaveLength(80);
    expect(new Set(asked.map((r) => r.model))).toEqual(new Set(['scripted-sample']));
    // No ground truth body in any prompt: the target's body line is replaced by the placeholder.
    for (const r of asked) expect(r.messages[1]!.content).toContain('...  # the body to implement');
  });
});
