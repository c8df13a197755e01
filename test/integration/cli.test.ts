/**
 * `scripts/start.ts` as a user runs it, in its own process: a GitHub search (against a local
 * server serving recorded GitHub API answers and a tarball made here from the demo repository),
 * the crawl on the test's Temporal server, the LLM steps against scripted responses over HTTP,
 * and the scripts in real containers.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { DatasetRecordSchema } from '../../activities/dataset/records';
import { loadLlmScript, startScriptedLlmServer, type ScriptedLlmServer } from '../../scripts/lib/scripted-llm-server';
import { DEMO_HEAD, demoRepo, startDemoGitHub } from '../fixtures/github/demo-repo';
import type { FakeGitHub } from '../fixtures/github/server';
import { requireEnv } from '../support/factory';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const DEMO_SCRIPT = path.join(ROOT, 'scripts/demo/scripted-llm-responses.json');

describe('tsx scripts/start.ts --github train', () => {
  let gh: FakeGitHub;
  let llm: ScriptedLlmServer;
  beforeAll(async () => {
    // One repository the filters select and one they must not (created after the train window).
    gh = await startDemoGitHub([demoRepo('textkit', '2024-02-01T10:00:00Z'), demoRepo('late', '2025-01-01T00:00:00Z')]);
    llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT));
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
