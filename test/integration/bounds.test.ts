/**
 * Names from outside never make an id or a search attribute Temporal refuses, and no child
 * workflow waits forever, on the real dev server, sandbox and HTTP:
 *   - a local repository whose function sits under a 3 KB path (nested folders with long names)
 *     is crawled end to end and its function accepted;
 *   - an evaluation dataset whose line has a 3,000-character repo_name, function_id and func_name
 *     is evaluated and its result recorded;
 *   - a function workflow and an evaluation's function workflow past their time limit (from the
 *     configuration) are recorded with the reason, and their runs finalize.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatasetRecordSchema, RejectionSchema } from '../../activities/store/records';
import { parseEvalLines } from '../../activities/eval/run-files';
import { runCrawl } from '../../scripts/lib/crawl';
import { runEval } from '../../scripts/lib/eval-run';
import { MAX_KEYWORD_BYTES, MAX_WORKFLOW_ID_BYTES, utf8Length } from '../../workflows/ids';
import { fenced } from '../support/eval-scripts';
import { startTestFactory, type TestFactory } from '../support/factory';

const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/** A repository whose one module sits 12 folders of 250 characters deep: a path over 3 KB. */
function longPathRepo(): { root: string; relPath: string } {
  const root = path.join(tmp('repost-long-'), 'longrepo');
  const folders = Array.from({ length: 12 }, (_, i) => `d${String(i).padStart(2, '0')}_${'n'.repeat(246)}`);
  const dir = path.join(root, ...folders);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'totals.py'), TOTAL);
  return { root, relPath: [...folders, 'totals.py'].join('/') };
}

const TOTAL = 'def running_total(values):\n    """The sum of a list of numbers."""\n    total = 0\n    for v in values:\n        total += v\n    return total\n';
const TOTAL_TESTS = `${TOTAL}\n\ndef test_running_total():\n    assert running_total([]) == running_total_new_implementation([])\n    assert running_total([1, 2, 3]) == running_total_new_implementation([1, 2, 3])\n    assert running_total([-4]) == running_total_new_implementation([-4])\n\n\nif __name__ == "__main__":\n    test_running_total()\n`;
const YES = 'REASONING: the test compares both implementations on an empty list and on non-empty ones.\nANSWER: yes';

/** A function name, a repository name and a function id of 3,000 characters each. */
const LONG_NAME = `f${'x'.repeat(2999)}`;
const LONG_FUNC = `def ${LONG_NAME}(a, b):\n    """Add two numbers."""\n    return a + b\n`;
function longRecord() {
  const script = `${LONG_FUNC}\n\ndef test_add():\n    assert ${LONG_NAME}(1, 2) == ${LONG_NAME}_new_implementation(1, 2)\n    assert ${LONG_NAME}(0, 0) == ${LONG_NAME}_new_implementation(0, 0)\n\n\nif __name__ == "__main__":\n    test_add()\n`;
  return {
    func_name: LONG_NAME,
    idx: 'long',
    repo_name: `owner/${'r'.repeat(2994)}`,
    func_path: 'add.py',
    orig_func: LONG_FUNC,
    orig_context: `## add.py\n${LONG_FUNC}`,
    eval_script: script,
    commit_id: 'scripted',
    function_id: `id-${'i'.repeat(2997)}`,
    qualname: LONG_NAME,
  };
}

/** Every workflow of a run on the dev server, with its search attributes. */
async function workflowsOf(factory: TestFactory, runId: string) {
  const out: { id: string; type: string; attributes: Record<string, unknown> }[] = [];
  for await (const wf of factory.client.workflow.list({ query: `RepostRunId = "${runId}"` })) {
    out.push({ id: wf.workflowId, type: wf.type, attributes: Object.fromEntries(wf.typedSearchAttributes.getAll().map((p) => [p.key.name, p.value])) });
  }
  return out;
}

function expectBounded(workflows: { id: string; attributes: Record<string, unknown> }[]) {
  for (const wf of workflows) {
    expect(utf8Length(wf.id)).toBeLessThanOrEqual(MAX_WORKFLOW_ID_BYTES);
    for (const v of Object.values(wf.attributes)) if (typeof v === 'string') expect(utf8Length(v)).toBeLessThanOrEqual(MAX_KEYWORD_BYTES);
  }
}

describe('names from outside are bounded', () => {
  let factory: TestFactory;
  beforeAll(async () => {
    factory = await startTestFactory({
      // Scripted LLM answers (fixtures).
      rules: [
        { kind: 'sandbox', functionName: 'running_total', responses: [fenced(TOTAL)] },
        { kind: 'tests', functionName: 'running_total', responses: [fenced(TOTAL_TESTS)] },
        { kind: 'check_tests', functionName: 'running_total', responses: [YES] },
        { kind: 'solve', functionName: LONG_NAME, responses: [fenced(LONG_FUNC)] },
      ],
    });
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('crawls a repository whose function sits under a 3 KB path to a record', async () => {
    const { root, relPath } = longPathRepo();
    expect(relPath.length).toBeGreaterThan(3000);
    const runId = 'it-long-path';
    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: root }], runId });
    expect(summary).toMatchObject({ functions: 1, accepted: 1, rejected: 0 });
    const [record] = fs.readFileSync(summary.datasetFile, 'utf8').split('\n').filter(Boolean).map((l) => DatasetRecordSchema.parse(JSON.parse(l)));
    expect(record!.func_path).toBe(relPath);
    expect(record!.coverage_rate).toBe(1);

    const workflows = await workflowsOf(factory, runId);
    expectBounded(workflows);
    const fnWorkflow = workflows.find((w) => w.type === 'functionWorkflow')!;
    expect(fnWorkflow.id).toBe(`${runId}/fn/longrepo/running_total/${record!.function_id}`);
    // The path is too long for a search attribute as it is: its head and a hash of the whole.
    expect(fnWorkflow.attributes.RepostFunction).toMatch(/^d00_n+\/d01_n+.*…~[0-9a-f]{16}$/);
    expect(fnWorkflow.attributes.RepostRepo).toBe('longrepo');
  });

  it('evaluates a dataset line with a 3,000-character repo_name, function_id and func_name', async () => {
    const dir = tmp('repost-long-eval-');
    const datasetFile = path.join(dir, 'dataset.jsonl');
    fs.writeFileSync(datasetFile, JSON.stringify(longRecord()) + '\n');
    const runId = 'it-long-eval';
    const done = await runEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile, settings: { model: 'scripted-long', n: 1, ks: [1] }, runId, outDir: path.join(dir, 'out') });
    expect(done).toMatchObject({ functions: 1, errors: 0 });
    const [line] = parseEvalLines(fs.readFileSync(path.join(done.outDir, 'eval.jsonl'), 'utf8'));
    expect(line!.function_id).toBe(longRecord().function_id);
    expect(line!.repo_name).toBe(longRecord().repo_name);
    expect(line!.samples[0]!.rounds[0]!.passed).toBe(true);

    const workflows = await workflowsOf(factory, runId);
    expectBounded(workflows);
    const fnWorkflow = workflows.find((w) => w.type === 'evalFunctionWorkflow')!;
    expect(fnWorkflow.id).toMatch(/^it-long-eval\/eval\/owner\/r+…\/fx+…\/~[0-9a-f]{16}$/);
  });
});

describe('child workflows end at their time limit', () => {
  let factory: TestFactory;
  beforeAll(async () => {
    factory = await startTestFactory(
      {
        // Scripted LLM answers (fixtures) that come too late for the functions' time limits.
        rules: [
          { kind: 'sandbox', functionName: 'running_total', responses: [{ fault: 'slow', delayMs: 30_000, text: fenced(TOTAL) }] },
          { kind: 'solve', functionName: LONG_NAME, responses: [{ fault: 'slow', delayMs: 30_000, text: fenced(LONG_FUNC) }] },
        ],
      },
      { temporal: { childTimeoutSec: { function: 4, evalFunction: 4 } } },
    );
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('records a function past its time limit as rejected (internal), and the crawl finalizes', async () => {
    const { root } = longPathRepo();
    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: root }], runId: 'it-fn-timeout' });
    expect(summary).toMatchObject({ functions: 1, accepted: 0, rejected: 1 });
    const [rejection] = fs.readFileSync(path.join(summary.outDir, 'rejections.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => RejectionSchema.parse(JSON.parse(l)));
    expect(rejection!.stage).toBe('internal');
    expect(rejection!.reason).toMatch(/the function's workflow failed: .*timed out/i);
  });

  it("records an evaluation's function past its time limit with the reason, and the run finalizes", async () => {
    const dir = tmp('repost-timeout-eval-');
    const datasetFile = path.join(dir, 'dataset.jsonl');
    fs.writeFileSync(datasetFile, JSON.stringify(longRecord()) + '\n');
    const done = await runEval({ config: factory.config, client: factory.client, store: factory.store, datasetFile, settings: { model: 'scripted-slow', n: 1, ks: [1] }, runId: 'it-eval-timeout', outDir: path.join(dir, 'out') });
    expect(done).toMatchObject({ functions: 1, errors: 1 });
    const [line] = parseEvalLines(fs.readFileSync(path.join(done.outDir, 'eval.jsonl'), 'utf8'));
    expect(line!.error).toMatch(/the function's workflow failed: .*timed out/i);
  });
});
