/**
 * The Harbor export on a real run: the demo repository crawled through Temporal with the scripted
 * LLM (fixtures over HTTP) and containers, functions and classes (the demo's class environment,
 * `Tally`), exported with `scripts/export.ts --format harbor`, and run by the real `harbor` CLI
 * (the project-local venv bootstrap makes) with its Docker environment: the `oracle` agent
 * (solve.sh, the ground truth) scores 1 on every task, `nop` (no answer) 0, and a wrong answer
 * (written by solve.sh in a copy of the dataset: a function's signature returning None; a class
 * whose every `return` gives None) 0. A class task's reward.json holds its tests one by one.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { runCrawl } from '../../scripts/lib/crawl';
import { loadLlmScript } from '../../scripts/scripted-llm/server';
import { returnNone } from '../support/eval-scripts';
import { startTestFactory, type TestFactory } from '../support/factory';

const ROOT = path.resolve(__dirname, '../..');
const DEMO_REPO = path.join(ROOT, 'scripts/demo/example-repo');
const DEMO_SCRIPT = path.join(ROOT, 'scripts/demo/scripted-llm-responses.json');
const HARBOR = path.join(ROOT, '.tools/harbor/bin/harbor');
const run = promisify(execFile);

interface Trial {
  task: string;
  reward: number | null;
  rewards: Record<string, number>;
  kind: string | null;
  exception: string | null;
  /** verdict.json's tests (a class task's, one by one). */
  tests: { name: string; exceptionType?: string | null; assertion?: { line: number; function: string; source: string; message: string } }[];
}

/** `harbor run` over a dataset folder with one agent; each trial's reward and verdict. */
async function harborRun(dataset: string, agent: string, jobs: string, name: string): Promise<Trial[]> {
  await run(HARBOR, ['run', '-p', dataset, '-a', agent, '-e', 'docker', '-n', '2', '-y', '-q', '-o', jobs, '--job-name', name], { cwd: jobs, maxBuffer: 64 * 1024 * 1024, timeout: 20 * 60_000 });
  const jobDir = path.join(jobs, name);
  return fs
    .readdirSync(jobDir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => {
      const result = JSON.parse(fs.readFileSync(path.join(jobDir, e.name, 'result.json'), 'utf8')) as {
        task_name?: string;
        verifier_result?: { rewards?: Record<string, number> } | null;
        exception_info?: { exception_message?: string } | null;
      };
      const verdictFile = path.join(jobDir, e.name, 'verifier', 'verdict.json');
      const verdict = fs.existsSync(verdictFile) ? (JSON.parse(fs.readFileSync(verdictFile, 'utf8')) as { kind: string | null; tests?: Trial['tests'] }) : null;
      return {
        task: result.task_name ?? e.name.split('__')[0]!,
        reward: result.verifier_result?.rewards?.reward ?? null,
        rewards: result.verifier_result?.rewards ?? {},
        kind: verdict?.kind ?? null,
        exception: result.exception_info?.exception_message ?? null,
        tests: verdict?.tests ?? [],
      };
    });
}

describe('the Harbor export of the demo run, run by the harbor CLI', () => {
  let factory: TestFactory;
  let work: string;
  let dataset: string;
  let tasks: string[];
  let runDir: string;
  /** The class environments' tasks, and their test functions. */
  const classTasks = new Map<string, string[]>();
  beforeAll(async () => {
    expect(fs.existsSync(HARBOR)).toBe(true);
    factory = await startTestFactory(loadLlmScript(DEMO_SCRIPT), { crawl: { targets: 'both' } });
    const summary = await runCrawl({ config: factory.config, client: factory.client, store: factory.store, sources: [{ kind: 'local', path: DEMO_REPO, name: 'textkit', split: 'train' }], runId: 'it-harbor' });
    runDir = summary.outDir;
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-harbor-'));
    dataset = path.join(work, 'dataset');
    const { stdout } = await run(process.execPath, ['-r', 'tsx/cjs', 'scripts/export.ts', 'it-harbor', '--out', dataset, '--format', 'harbor'], {
      cwd: ROOT,
      env: { ...process.env, REPOST_DATA_DIR: factory.dataDir, REPOST_SANDBOX_IMAGE: factory.config.sandbox.image! },
    });
    expect(stdout).toMatch(/as a Harbor dataset: \d+ task\(s\)/);
    tasks = fs.readdirSync(dataset).filter((n) => fs.existsSync(path.join(dataset, n, 'task.toml'))).sort();
    for (const t of tasks) {
      const task = JSON.parse(fs.readFileSync(path.join(dataset, t, 'tests', 'task.json'), 'utf8')) as { kind: string; tests: string[] };
      if (task.kind === 'class') classTasks.set(t, task.tests);
    }
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('writes one task per accepted record, each with the files Harbor reads', async () => {
    const lines = (file: string) => fs.readFileSync(path.join(runDir, file), 'utf8').split('\n').filter(Boolean);
    const functions = lines('dataset.jsonl');
    const classes = lines('classes-dataset.jsonl');
    expect(classes.length).toBeGreaterThanOrEqual(1);
    expect(tasks.length).toBe(functions.length + classes.length);
    expect(tasks.length - classTasks.size).toBeGreaterThanOrEqual(3);
    expect(classTasks.size).toBe(classes.length);
    for (const t of tasks) {
      for (const f of ['task.toml', 'instruction.md', 'environment/Dockerfile', 'tests/test.sh', 'tests/verify.py', 'solution/solve.sh']) expect(fs.existsSync(path.join(dataset, t, f))).toBe(true);
    }
    expect(fs.existsSync(path.join(dataset, 'dataset.toml'))).toBe(true);
  });

  it('oracle scores 1 on every task, nop 0, a wrong answer 0', async () => {
    const jobs = path.join(work, 'jobs');
    fs.mkdirSync(jobs);
    const oracle = await harborRun(dataset, 'oracle', jobs, 'oracle');
    expect(oracle.map((t) => t.task).sort()).toEqual(tasks);
    for (const t of oracle) expect(t).toMatchObject({ reward: 1, kind: null, exception: null });
    // A class task: every test function passed, one by one.
    for (const t of oracle.filter((x) => classTasks.has(x.task))) {
      const tests = classTasks.get(t.task)!;
      expect(tests.length).toBeGreaterThanOrEqual(2);
      expect(t.rewards).toMatchObject({ test_pass_rate: 1, tests_passed: tests.length, tests_total: tests.length });
      for (const name of tests) expect(t.rewards[`pass_${name}`]).toBe(1);
      // Each test's own duration, measured around it by the harness's test runner, within the whole run's.
      const durations = tests.map((name) => t.rewards[`duration_${name}`]!);
      for (const d of durations) expect(d).toBeGreaterThan(0);
      expect(durations.reduce((a, b) => a + b, 0)).toBeLessThan(t.rewards.duration_sec!);
    }

    const nop = await harborRun(dataset, 'nop', jobs, 'nop');
    expect(nop).toHaveLength(tasks.length);
    for (const t of nop) expect(t).toMatchObject({ reward: 0, kind: 'no_code', exception: null });
    for (const t of nop.filter((x) => classTasks.has(x.task))) expect(t.rewards).toMatchObject({ test_pass_rate: 0, tests_passed: 0 });

    // A copy whose solve.sh writes a wrong answer: a function's signature returning None; a class
    // whose every `return` gives None (its constructor and the methods that only change it stay right).
    const wrong = path.join(work, 'wrong');
    fs.cpSync(dataset, wrong, { recursive: true });
    for (const t of tasks) {
      const taskJson = JSON.parse(fs.readFileSync(path.join(wrong, t, 'tests', 'task.json'), 'utf8')) as { name: string };
      const solve = fs.readFileSync(path.join(wrong, t, 'solution', 'solve.sh'), 'utf8');
      const truth = /<<'([A-Z_]+)'\n([\s\S]*)\n\1\n/.exec(solve)!;
      const classTask = classTasks.has(t);
      const answer = classTask ? truth[2]!.replace(/^(\s+)return\b.*$/gm, '$1return None') : returnNone(truth[2]!);
      expect(answer).toContain(classTask ? `class ${taskJson.name}` : `def ${taskJson.name}`);
      expect(answer).not.toBe(truth[2]);
      fs.writeFileSync(path.join(wrong, t, 'solution', 'solve.sh'), solve.replace(truth[2]!, answer.trimEnd()));
    }
    const wrongRun = await harborRun(wrong, 'oracle', jobs, 'wrong');
    expect(wrongRun).toHaveLength(tasks.length);
    for (const t of wrongRun) {
      expect(t.reward).toBe(0);
      expect(t.exception).toBeNull();
      expect(['assertion', 'exception']).toContain(t.kind);
    }
    for (const t of wrongRun.filter((x) => classTasks.has(x.task))) {
      expect(t.rewards.test_pass_rate).toBeLessThan(1);
      // A test that failed on an assertion says which one and the values it compared (the answer's side gave None).
      const asserted = t.tests.filter((x) => x.exceptionType === 'AssertionError');
      expect(asserted.length).toBeGreaterThan(0);
      for (const x of asserted) expect(x.assertion).toMatchObject({ line: expect.any(Number), function: x.name, source: expect.stringMatching(/^assert /), message: expect.stringMatching(/^expected .+, got None$/) });
    }
  }, 45 * 60_000);
});
