/**
 * `scripts/eval.ts` and `scripts/rft.ts` as a user runs them, each in its own process. The
 * evaluation runs as a deployment would: launched with `--no-workers` from one folder, served by a
 * worker process that shares nothing with the launcher but the test's Temporal server and a
 * PostgreSQL store (its own empty data directory, started with another model than the run's), a
 * scripted model served over HTTP. The run's files appear on the launcher's side only.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseEvalDataset } from '../../../activities/eval/dataset';
import { parseEvalLines } from '../../../activities/eval/run-files';
import type { ExchangeRecord } from '../../../activities/llm';
import { PostgresStore } from '../../../activities/store/postgres';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import { fenced, rulesFor } from '../../support/eval-scripts';
import { requireEnv } from '../../support/factory';
import { DEMO_DATASET } from '../../support/fixtures';
import { cleanEnv, runScript, spawnWorker, type WorkerProcess } from '../../support/processes';
import { createStoreDatabase } from '../../support/store-database';

const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/** Every file under a folder, relative. */
function filesUnder(dir: string): string[] {
  return fs.existsSync(dir) ? (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name))) : [];
}

describe('tsx scripts/eval.ts and scripts/rft.ts', () => {
  const records = parseEvalDataset(fs.readFileSync(DEMO_DATASET, 'utf8'));
  const launcherDir = tmp('repost-eval-launcher-');
  const workerDir = tmp('repost-eval-worker-');
  let llm: ScriptedLlmServer;
  let storeUrl: string;
  let worker: WorkerProcess;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    llm = await startScriptedLlmServer({
      rules: [...rulesFor('solve', records, (r) => [fenced(r.origFunc)]), { kind: 'docstring', responses: ['', 'Scripted docstring of {{functionName}}.'] }],
    });
    storeUrl = await createStoreDatabase('evalcli');
    const label = `evalcli-${randomBytes(4).toString('hex')}`;
    const shared = {
      TEMPORAL_ADDRESS: requireEnv('REPOST_TEST_TEMPORAL_ADDRESS'),
      REPOST_STORE_URL: storeUrl,
      REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE'),
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'scripted',
      REPOST_TEMPORAL_TASK_QUEUES_WORKFLOWS: `${label}-wf`,
      REPOST_TEMPORAL_TASK_QUEUES_IO: `${label}-io`,
      REPOST_TEMPORAL_TASK_QUEUES_LLM: `${label}-llm`,
      REPOST_TEMPORAL_TASK_QUEUES_SANDBOX: `${label}-sb`,
    };
    // The worker is started with another model: it must use the run's.
    worker = spawnWorker(cleanEnv({ ...shared, OPENAI_MODEL: 'worker-model', REPOST_DATA_DIR: workerDir }), undefined, { cwd: workerDir, exactEnv: true });
    await worker.ready;
    env = cleanEnv({ ...shared, OPENAI_MODEL: 'scripted-run-model', REPOST_DATA_DIR: launcherDir });
  });

  afterAll(async () => {
    await worker?.stop();
    await llm?.close();
  });

  const cli = (script: string, args: string[]) => runScript(script, args, { cwd: launcherDir, env, exactEnv: true });

  it('evaluates with workers elsewhere, prints the numbers, writes the files on the launcher side, combines reports', async () => {
    const out = path.join(launcherDir, 'run');
    const ran = await cli('scripts/eval.ts', ['--dataset', DEMO_DATASET, '--no-workers', '--n', '2', '--k', '1,2', '--docstring', 'generated', '--out', out]);
    expect({ code: ran.code, stderr: ran.code ? ran.stderr : '' }).toEqual({ code: 0, stderr: '' });
    expect(ran.stdout).toContain('note: 3 record(s) of the train split are evaluated');
    expect(ran.stdout).toContain('3 of 3 function(s) evaluated, 6 sample(s) of scripted-run-model');
    expect(ran.stdout).toContain('Pass@k: pass@1 100.0%, pass@2 100.0%');
    for (const f of ['eval.jsonl', 'eval-summary.json', 'eval-report.html', 'eval-run.json']) expect(fs.existsSync(path.join(out, f))).toBe(true);
    // Every call used the run's models (the solve model as frozen; docstrings with the run's default), never the worker's.
    expect(new Set(llm.requests.map((r) => r.model))).toEqual(new Set(['scripted-run-model']));
    // The worker kept nothing of the run on its disk: results, summary and files live in the store and with the launcher.
    expect(filesUnder(workerDir).filter((f) => /eval|summary|report|store\/runs/.test(f))).toEqual([]);

    // Generated docstrings: an empty answer is asked again; the second one is in the solve prompt.
    const lines = parseEvalLines(fs.readFileSync(path.join(out, 'eval.jsonl'), 'utf8'));
    expect(lines).toHaveLength(3);
    const store = await PostgresStore.connect(storeUrl, tmp('repost-eval-reader-'));
    try {
      for (const l of lines) {
        expect(l.docstring).toBe('generated');
        expect(l.usage_by_step.docstring!.calls).toBe(2);
        const solve = (await store.listExchanges(l.function_id)).find((e) => e.step === 'solve')!;
        const exchange = await store.getJson<ExchangeRecord>(solve.exchangeKey);
        expect(exchange.request.messages[1]!.content).toContain(`"""Scripted docstring of ${l.func_name}."""`);
      }
      const runId = JSON.parse(fs.readFileSync(path.join(out, 'eval-run.json'), 'utf8')).runId as string;
      expect(await store.getRun(runId)).toMatchObject({ kind: 'eval', status: 'finished', outDir: out });
    } finally {
      await store.close();
    }

    const combined = path.join(launcherDir, 'combined.html');
    const report = await cli('scripts/eval.ts', ['--report', combined, out, out]);
    expect(report.code).toBe(0);
    expect(fs.readFileSync(combined, 'utf8')).toContain('2 run(s)');
  });

  it("evaluates the project's own export, its folder and its Parquet file, as the JSON Lines it came from", async () => {
    // A run folder holding the demo records, exported as a user would.
    const runDir = path.join(launcherDir, 'demo-run');
    fs.mkdirSync(runDir);
    fs.copyFileSync(DEMO_DATASET, path.join(runDir, 'dataset.jsonl'));
    fs.writeFileSync(path.join(runDir, 'summary.json'), JSON.stringify({ runId: 'demo-run', repositories: 1, functions: records.length, accepted: records.length, rejected: 0, funnel: {} }));
    const exportDir = path.join(launcherDir, 'demo-export');
    const exported = await cli('scripts/export.ts', [runDir, '--out', exportDir]);
    expect({ code: exported.code, stderr: exported.stderr }).toEqual({ code: 0, stderr: '' });
    const parquet = path.join(exportDir, 'data', 'train-00000-of-00001.parquet');
    const pass = async (dataset: string, name: string) => {
      const ran = await cli('scripts/eval.ts', ['--dataset', dataset, '--no-workers', '--out', path.join(launcherDir, `from-${name}`)]);
      expect({ code: ran.code, stderr: ran.code ? ran.stderr : '' }).toEqual({ code: 0, stderr: '' });
      return { functions: /(\d+) of \d+ function\(s\) evaluated/.exec(ran.stdout)?.[1], pass1: /Pass@k: pass@1 ([\d.]+%)/.exec(ran.stdout)?.[1] };
    };
    const fromJsonl = await pass(DEMO_DATASET, 'jsonl');
    expect(fromJsonl).toEqual({ functions: String(records.length), pass1: '100.0%' });
    expect(await pass(exportDir, 'folder')).toEqual(fromJsonl);
    expect(await pass(parquet, 'parquet')).toEqual(fromJsonl);
  });

  it('refuses training data from eval-split records, rejects bad flags with exit code 2 and a message', async () => {
    const evalSplit = path.join(launcherDir, 'eval-split.jsonl');
    const lines = fs.readFileSync(DEMO_DATASET, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    fs.writeFileSync(evalSplit, lines.map((l, i) => JSON.stringify(i === 1 ? { ...l, split: 'eval' } : l)).join('\n') + '\n');
    const refused = await cli('scripts/rft.ts', ['--dataset', evalSplit, '--no-workers']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^rft: refused: .*eval-split\.jsonl: 1 of 3 record\(s\) belong to the eval split \(e\.g\. textkit-demo word_frequencies\)/);

    const bad = await cli('scripts/eval.ts', ['--dataset', DEMO_DATASET, '--select', 'best']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^eval: bad flags: --select: Invalid option.* \(see --help\)$/m);
    const missing = await cli('scripts/eval.ts', ['--dataset', path.join(launcherDir, 'nope.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^eval: refused: .*nope\.jsonl does not exist/);
    const help = await cli('scripts/rft.ts', ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Rejection-sampling fine-tuning data');
  });
});
