/**
 * `scripts/start.ts` as a user runs it, in its own process: a GitHub search (against a local
 * server serving recorded GitHub API answers and a tarball made here from the demo repository),
 * the crawl on the test's Temporal server, the LLM steps against scripted responses over HTTP,
 * and the scripts in real containers.
 */
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { DatasetRecordSchema } from '../../activities/store/records';
import { loadLlmScript, startScriptedLlmServer, type ScriptedLlmServer } from '../../scripts/scripted-llm/server';
import { DEMO_HEAD, demoRepo, startDemoGitHub } from '../fixtures/github/demo-repo';
import type { FakeGitHub } from '../fixtures/github/server';
import { requireEnv } from '../support/factory';
import { waitFor } from '../support/processes';
import { freePort, portInUse } from '../../scripts/lib/temporal-server';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const DEMO_REPO = path.join(ROOT, 'scripts/demo/example-repo');
const DEMO_SCRIPT = path.join(ROOT, 'scripts/demo/scripted-llm-responses.json');

describe('tsx scripts/start.ts --github train', () => {
  let gh: FakeGitHub;
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    // One repository the filters select and one they must not (created after the train window).
    gh = await startDemoGitHub([demoRepo('textkit', '2024-02-01T10:00:00Z'), demoRepo('late', '2025-01-01T00:00:00Z')]);
    llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT), { servedModels: ['gpt-4o'] });
  });
  afterAll(async () => {
    await gh?.close();
    await llm?.close();
  });

  it('searches, pins, snapshots and crawls, and prints where the dataset went', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-cli-'));
    const out = path.join(dataDir, 'out');
    const q = randomBytes(4).toString('hex');
    const { stdout } = await run(process.execPath, ['-r', 'tsx/cjs', 'scripts/start.ts', '--github', 'train', '--limit', '10', '--out', out, '--run-id', `cli-${q}`], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: requireEnv('REPOST_TEST_TEMPORAL_ADDRESS'),
        REPOST_DATA_DIR: dataDir,
        REPOST_GITHUB_BASE_URL: gh.baseURL,
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: 'scripted',
        REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE'),
        REPOST_TEMPORAL_TASK_QUEUES_WORKFLOWS: `cli-wf-${q}`,
        REPOST_TEMPORAL_TASK_QUEUES_IO: `cli-io-${q}`,
        REPOST_TEMPORAL_TASK_QUEUES_LLM: `cli-llm-${q}`,
        REPOST_TEMPORAL_TASK_QUEUES_SANDBOX: `cli-sb-${q}`,
      },
    });
    expect(stdout).toMatch(/GitHub search \(train window\): 1 repositories/);
    expect(stdout).toContain(`dataset written to ${out}/`);
    expect(stdout).toMatch(/4 function\(s\), 3 accepted, 1 rejected \(test_check: 1\)/);
    const records = fs.readFileSync(path.join(out, 'dataset.jsonl'), 'utf8').trim().split('\n').map((l) => DatasetRecordSchema.parse(JSON.parse(l)));
    expect(records).toHaveLength(3);
    for (const r of records) {
      expect(r.repo_name).toBe('demo/textkit');
      expect(r.commit_id).toBe(DEMO_HEAD);
    }
    expect(gh.log.some((l) => l.startsWith('GET /codeload/demo/textkit/'))).toBe(true);
  });
});

describe('tsx scripts/start.ts killed mid-crawl, then --attach', () => {
  it('picks the crawl up where it stopped, on the dev server the killed command left, and prints its result', async () => {
    // Scripted LLM responses, one second each, so the crawl is under way when the command dies.
    const llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT), { latencyMs: 1000, servedModels: ['gpt-4o'] });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-attach-'));
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      REPOST_DATA_DIR: dataDir,
      REPOST_TEMPORAL_PORT: String(port),
      REPOST_TEMPORAL_UI_PORT: String(await freePort()),
      REPOST_TEMPORAL_HEARTBEAT_TIMEOUT_SEC: '10',
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'scripted',
      REPOST_SANDBOX_IMAGE: requireEnv('REPOST_TEST_SANDBOX_IMAGE'),
    };
    delete env.TEMPORAL_ADDRESS;
    const first = spawn(process.execPath, ['-r', 'tsx/cjs', 'scripts/start.ts', '--local', DEMO_REPO, '--run-id', 'cli-attach'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let printed = '';
    first.stdout!.on('data', (d: Buffer) => (printed += d.toString()));
    first.stderr!.on('data', (d: Buffer) => (printed += d.toString()));
    try {
      await waitFor('the crawl to be under way', () => {
        if (first.exitCode !== null) throw new Error(`start.ts ended early:\n${printed}`);
        return llm.requests.length >= 6;
      }, 180_000);
      first.kill('SIGKILL');
      await new Promise((r) => first.once('exit', r));
      expect(await portInUse(port)).toBe(true);

      // Meanwhile status.ts follows the run from its store and Temporal until it ends.
      const watching = run(process.execPath, ['-r', 'tsx/cjs', 'scripts/status.ts', 'cli-attach', '--watch', '--every', '1'], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 });
      const { stdout } = await run(process.execPath, ['-r', 'tsx/cjs', 'scripts/start.ts', '--attach', 'cli-attach', '--progress-every', '1'], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 });
      expect(stdout).toMatch(/found the Temporal dev server a stopped command left running/);
      // The live view: repositories, functions, accepted and rejected, LLM use, time left.
      expect(stdout).toMatch(
        /repos \d\/1 \| functions \d\/~?\d+.* \| accepted \d, rejected \d \| rounds: debug \d+ in \d+ fn, coverage \d+ in \d+ fn \| LLM \d+ calls, \d+k? tokens, \$\d+\.\d\d, (\$\d+\.\d+ per accepted record|no record accepted yet) \| \d+ refused.*: \d+k? tokens, \$\d+\.\d\d \| .* elapsed/,
      );
      const watched = (await watching).stdout;
      expect(watched).toMatch(/^run cli-attach \(crawl\): running/m);
      expect(watched).toMatch(/repos 1\/1 \| functions 4\/4 .*accepted 3, rejected 1/);
      expect(stdout).toMatch(/run cli-attach finished: 4 function\(s\), 3 accepted, 1 rejected \(test_check: 1\)/);
      const dataset = fs.readFileSync(path.join(dataDir, 'runs', 'cli-attach', 'dataset.jsonl'), 'utf8').trim().split('\n');
      expect(dataset).toHaveLength(3);
      // The adopted server was stopped at the end, like one the command had started itself.
      await waitFor('the dev server to stop', async () => !(await portInUse(port)), 30_000);
    } finally {
      if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
      await llm.close();
    }
  });
});
