/**
 * A distributed crawl for real: three worker processes that share nothing but the test's Temporal
 * server and a PostgreSQL store, each with an empty data directory of its own and its own roles,
 * and a crawl started with `scripts/start.ts --no-workers` from a fourth directory. The dataset
 * must equal the embedded mode's (local store, workers in one process) on the same input, and the
 * LLM worker, started with another model, must use the run's. Workers whose store is unreachable,
 * or is not the store of a crawl they would serve, refuse to start.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DatasetRecordSchema, RejectionSchema } from '../../activities/store/records';
import { PostgresStore } from '../../activities/store/postgres';
import { runCrawl, startCrawl } from '../../scripts/lib/crawl';
import { loadLlmScript, startScriptedLlmServer, type ScriptedLlmServer } from '../../scripts/scripted-llm/server';
import { freePort } from '../../scripts/lib/temporal-server';
import { loadConfig } from '../../temporal.config';
import { RUN_MEMO_KEY } from '../../scripts/lib/store-check';
import { requireEnv, startTestFactory } from '../support/factory';
import { cleanEnv, PROJECT_ROOT, runScript, spawnWorker, waitFor, type WorkerProcess } from '../support/processes';
import { createStoreDatabase } from '../support/store-database';

const DEMO_REPO = path.join(PROJECT_ROOT, 'scripts/demo/example-repo');
const DEMO_SCRIPT = path.join(PROJECT_ROOT, 'scripts/demo/scripted-llm-responses.json');
/** The model the run is started with; the LLM worker is started with another. */
const RUN_MODEL = 'scripted-run-model';

const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

function readJsonl(file: string): Record<string, unknown>[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) : [];
}

/** Rows keyed by function id, without the fields that name the run. */
function byFunction(rows: Record<string, unknown>[]): Record<string, Record<string, unknown>> {
  return Object.fromEntries(rows.map(({ run_id: _run, ...rest }) => [String(rest.function_id), rest]));
}

function queueEnv(label: string): Record<string, string> {
  return {
    REPOST_TEMPORAL_TASK_QUEUES_WORKFLOWS: `${label}-wf`,
    REPOST_TEMPORAL_TASK_QUEUES_IO: `${label}-io`,
    REPOST_TEMPORAL_TASK_QUEUES_LLM: `${label}-llm`,
    REPOST_TEMPORAL_TASK_QUEUES_SANDBOX: `${label}-sb`,
  };
}

describe('a crawl over three worker processes sharing only Temporal and PostgreSQL', () => {
  let llm: ScriptedLlmServer;
  let storeUrl: string;
  let base: Record<string, string>;
  const workers: WorkerProcess[] = [];
  const runId = `dist-${randomBytes(3).toString('hex')}`;
  let outDir: string;
  let launcher: { code: number | null; stdout: string; stderr: string };

  beforeAll(async () => {
    llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT));
    storeUrl = await createStoreDatabase('dist');
    base = {
      TEMPORAL_ADDRESS: requireEnv('REPOST_TEST_TEMPORAL_ADDRESS'),
      REPOST_STORE_URL: storeUrl,
      REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE'),
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'scripted',
      ...queueEnv(`dist-${randomBytes(4).toString('hex')}`),
    };
    const roles: [string, Record<string, string>][] = [
      ['llm', { OPENAI_MODEL: 'other' }],
      ['sandbox,io', {}],
      ['workflows', {}],
    ];
    // One after another: each compiles and starts on a 2-core machine shared with other suites.
    for (const [role, extra] of roles) {
      const dir = tmp(`repost-worker-${role.replace(',', '-')}-`);
      const worker = spawnWorker(cleanEnv({ ...base, ...extra, REPOST_DATA_DIR: dir }), role.split(','), { cwd: dir, exactEnv: true });
      workers.push(worker);
      await worker.ready;
    }
    const launcherDir = tmp('repost-launcher-');
    outDir = path.join(launcherDir, 'out');
    launcher = await runScript('scripts/start.ts', ['--local', DEMO_REPO, '--no-workers', '--run-id', runId, '--out', outDir], {
      cwd: launcherDir,
      env: cleanEnv({ ...base, OPENAI_MODEL: RUN_MODEL, REPOST_DATA_DIR: launcherDir }),
      exactEnv: true,
    });
  });

  afterAll(async () => {
    for (const w of workers) await w.stop();
    await llm?.close();
  });

  it('writes the same dataset as the embedded mode on the same input', async () => {
    expect(launcher.stderr).toBe('');
    expect(launcher.code).toBe(0);
    expect(launcher.stdout).toMatch(/4 function\(s\), 3 accepted, 1 rejected \(test_check: 1\)/);

    // The embedded mode: a local store and every role in one process, against a fresh scripted server.
    const embedded = await startTestFactory(loadLlmScript(DEMO_SCRIPT), { llm: { model: RUN_MODEL } });
    let reference;
    try {
      reference = await runCrawl({ config: embedded.config, client: embedded.client, store: embedded.store, sources: [{ kind: 'local', path: DEMO_REPO }], runId: `${runId}-embedded` });
    } finally {
      await embedded.close();
    }
    const dataset = readJsonl(path.join(outDir, 'dataset.jsonl')).map((r) => DatasetRecordSchema.parse(r));
    const expected = readJsonl(reference.datasetFile).map((r) => DatasetRecordSchema.parse(r));
    expect(dataset).toHaveLength(3);
    expect(byFunction(dataset)).toEqual(byFunction(expected));
    const rejections = readJsonl(path.join(outDir, 'rejections.jsonl')).map((r) => RejectionSchema.parse(r));
    expect(byFunction(rejections)).toEqual(byFunction(readJsonl(path.join(reference.outDir, 'rejections.jsonl'))));

    const summary = JSON.parse(fs.readFileSync(path.join(outDir, 'summary.json'), 'utf8'));
    for (const key of ['repositories', 'functions', 'accepted', 'rejected', 'funnel', 'rejectedAt', 'bySplit', 'missingRecords', 'skippedRepos'] as const) {
      expect([key, summary[key]]).toEqual([key, (reference as unknown as Record<string, unknown>)[key]]);
    }
    expect(summary.llm.total.calls).toBe(reference.llm.total.calls);
    expect(summary.llm.total.promptTokens).toBe(reference.llm.total.promptTokens);

    // The workers' own data directories hold only caches: the run lives in PostgreSQL.
    const store = await PostgresStore.connect(storeUrl, tmp('repost-check-'));
    try {
      expect((await store.getRun(runId))?.status).toBe('finished');
      expect((await store.countRecords(runId)).total).toBe(4);
    } finally {
      await store.close();
    }
    for (const w of workers) expect(w.output()).not.toMatch(/StoreMismatch|missing/);
  });

  it('uses the run\'s model, not the LLM worker\'s own', () => {
    const distributed = llm.requests;
    expect(distributed.length).toBeGreaterThan(0);
    expect(new Set(distributed.map((r) => r.model))).toEqual(new Set([RUN_MODEL]));
  });

  it('reports the run\'s progress with status.ts from another machine\'s directory', async () => {
    const dir = tmp('repost-status-');
    const r = await runScript('scripts/status.ts', [runId], { cwd: dir, env: cleanEnv({ ...base, REPOST_DATA_DIR: dir }), exactEnv: true });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`run ${runId} (crawl): finished`);
    expect(r.stdout).toContain('repositories: 1/1 done');
    expect(r.stdout).toContain('functions: 4/4 finished, 3 accepted, 1 rejected');
    expect(r.stdout).toContain('rejected by stage: test_check: 1');
    expect(r.stdout).toMatch(new RegExp(`LLM: ${llm.requests.length} call\\(s\\), 0 from the cache`));
    // A finished run's status is read from the store alone: it never waits on Temporal.
    expect(r.stdout).not.toContain('Temporal');
    // The run's model has no price: every cost it prints says so, none reads $0.
    expect(r.stdout).not.toContain('$0.0000');
  });

  it('a worker whose store is not the one of a running crawl it would serve refuses to start, naming both', async () => {
    // A crawl started against the PostgreSQL store on queues no worker polls yet: it waits.
    const queues = queueEnv(`mismatch-${randomBytes(4).toString('hex')}`);
    const config = loadConfig({ env: cleanEnv({ ...base, ...queues, REPOST_DATA_DIR: tmp('repost-mm-') }) });
    const store = await PostgresStore.connect(storeUrl, config.dataDir);
    const { Client, Connection } = await import('@temporalio/client');
    const connection = await Connection.connect({ address: base.TEMPORAL_ADDRESS! });
    const client = new Client({ connection });
    const started = await startCrawl({ config, client, store, sources: [{ kind: 'local', path: DEMO_REPO }], runId: `${runId}-waiting` });
    try {
      const described = await client.workflow.getHandle(started.workflowId).describe();
      expect(described.memo?.[RUN_MEMO_KEY]).toMatchObject({ runId: `${runId}-waiting`, storeId: await store.storeId() });
      // Visibility lists the crawl shortly after it starts.
      await waitFor('the crawl in visibility', async () => {
        for await (const _ of client.workflow.list({ query: `WorkflowId = "${started.workflowId}" AND ExecutionStatus = "Running"` })) return true;
        return false;
      });
      const dir = tmp('repost-wrong-store-');
      const r = await runScript('workers/main.ts', ['--roles', 'io'], { cwd: dir, env: cleanEnv({ ...base, ...queues, REPOST_STORE_URL: '', REPOST_DATA_DIR: dir }), exactEnv: true });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`run ${runId}-waiting (workflow ${started.workflowId}) is running against store ${await store.storeId()}, but this worker's store is local:`);
      expect(r.stderr).toContain(`(${dir})`);
      expect(r.stdout).not.toContain('workers polling');
    } finally {
      await client.workflow.getHandle(started.workflowId).terminate('test over');
      await connection.close();
      await store.close();
    }
  });

  it('a worker whose store cannot be reached refuses to start, saying which store', async () => {
    const dir = tmp('repost-no-store-');
    const port = await freePort();
    // A database nobody listens for, and a data directory that is a file.
    const notADir = path.join(dir, 'data-file');
    fs.writeFileSync(notADir, '');
    const [pg, local] = await Promise.all([
      runScript('workers/main.ts', ['--roles', 'llm'], { cwd: dir, env: cleanEnv({ ...base, REPOST_STORE_URL: `postgres://factory:hunter2@127.0.0.1:${port}/repost`, REPOST_DATA_DIR: dir }), exactEnv: true }),
      runScript('workers/main.ts', ['--roles', 'io'], { cwd: dir, env: cleanEnv({ ...base, REPOST_STORE_URL: '', REPOST_DATA_DIR: notADir }), exactEnv: true }),
    ]);
    expect(pg.code).toBe(1);
    expect(pg.stderr).toContain(`cannot reach the store at postgres://factory@127.0.0.1:${port}/repost: `);
    expect(pg.stderr).not.toContain('hunter2');
    expect(local.code).toBe(1);
    expect(local.stderr).toContain(`cannot reach the store at ${notADir}: `);
  });
});
