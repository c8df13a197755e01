/**
 * The Harbor export on a real run: the demo repository crawled through Temporal with the scripted
 * LLM (fixtures over HTTP) and containers, exported with `scripts/export.ts --format harbor`, and
 * run by the real `harbor` CLI (the project-local venv bootstrap makes) with its Docker
 * environment: the `oracle` agent (solve.sh, the ground truth) scores 1 on every task, `nop`
 * (no answer) 0, and a wrong answer (the ground truth's signature returning None, written by
 * solve.sh in a copy of the dataset) 0.
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
  kind: string | null;
  exception: string | null;
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
      const verdict = fs.existsSync(verdictFile) ? (JSON.parse(fs.readFileSync(verdictFile, 'utf8')) as { kind: string | null }) : null;
      return {
        task: result.task_name ?? e.name.split('__')[0]!,
        reward: result.verifier_result?.rewards?.reward ?? null,
        kind: verdict?.kind ?? null,
        exception: result.exception_info?.exception_message ?? null,
      };
    });
}

describe('the Harbor export of the demo run, run by the harbor CLI', () => {
  let factory: TestFactory;
  let work: string;
  let dataset: string;
  let tasks: string[];
  let runDir: string;
  beforeAll(async () => {
    expect(fs.existsSync(HARBOR)).toBe(true);
    factory = await startTestFactory(loadLlmScript(DEMO_SCRIPT));
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
  });
  afterAll(async () => {
    await factory?.close();
  });

  it('writes one task per accepted record, each with the files Harbor reads', async () => {
    const records = fs.readFileSync(path.join(runDir, 'dataset.jsonl'), 'utf8').split('\n').filter(Boolean);
    expect(tasks.length).toBe(records.length);
    expect(tasks.length).toBeGreaterThanOrEqual(3);
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

    const nop = await harborRun(dataset, 'nop', jobs, 'nop');
    expect(nop).toHaveLength(tasks.length);
    for (const t of nop) expect(t).toMatchObject({ reward: 0, kind: 'no_code', exception: null });

    // A copy whose solve.sh writes a wrong answer: the signature, returning None.
    const wrong = path.join(work, 'wrong');
    fs.cpSync(dataset, wrong, { recursive: true });
    for (const t of tasks) {
      const taskJson = JSON.parse(fs.readFileSync(path.join(wrong, t, 'tests', 'task.json'), 'utf8')) as { name: string };
      const solve = fs.readFileSync(path.join(wrong, t, 'solution', 'solve.sh'), 'utf8');
      const truth = /<<'([A-Z_]+)'\n([\s\S]*)\n\1\n/.exec(solve)!;
      const answer = returnNone(truth[2]!);
      expect(answer).toContain(`def ${taskJson.name}`);
      fs.writeFileSync(path.join(wrong, t, 'solution', 'solve.sh'), solve.replace(truth[2]!, answer.trimEnd()));
    }
    const wrongRun = await harborRun(wrong, 'oracle', jobs, 'wrong');
    expect(wrongRun).toHaveLength(tasks.length);
    for (const t of wrongRun) {
      expect(t.reward).toBe(0);
      expect(t.exception).toBeNull();
      expect(['assertion', 'exception']).toContain(t.kind);
    }
  }, 45 * 60_000);
});
