/**
 * `start.ts` checks its sources and the LLM endpoint before it starts anything, and exits 2 with
 * what to change: a mistyped --local path, an endpoint that does not answer, a key it refuses, a
 * model it does not serve (naming the ones it does). The endpoint is the scripted LLM server (a
 * fixture) over real HTTP; each check also runs through `checkEndpoint` directly.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkEndpoint, checkLocalSources } from '../../scripts/lib/preflight';
import { loadLlmScript, startScriptedLlmServer, type ScriptedLlmServer } from '../../scripts/scripted-llm/server';
import { freePort } from '../../scripts/lib/temporal-server';
import { cleanEnv, runScript } from '../support/processes';

const DEMO_REPO = path.resolve(__dirname, '../../scripts/demo/example-repo');
const DEMO_SCRIPT = path.resolve(__dirname, '../../scripts/demo/scripted-llm-responses.json');

jest.setTimeout(300_000);

describe('start.ts checks before it starts anything', () => {
  let llm: ScriptedLlmServer;
  let dataDir: string;
  beforeAll(async () => {
    llm = await startScriptedLlmServer(loadLlmScript(DEMO_SCRIPT), { servedModels: ['qwen2.5-coder:7b', 'llama3.1:8b'], apiKey: 'the-key' });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-preflight-'));
  });
  afterAll(async () => {
    await llm?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** start.ts on the demo repository with this endpoint; nothing may start (no Temporal, no workers, no run). */
  const start = async (env: Record<string, string>, args = ['--local', DEMO_REPO]) => {
    const r = await runScript('scripts/start.ts', args, { env: cleanEnv({ REPOST_DATA_DIR: dataDir, REPOST_TEMPORAL_PORT: String(await freePort()), ...env }), exactEnv: true, timeoutMs: 120_000 });
    return { code: r.code, stdout: r.stdout, stderr: r.stderr.trim() };
  };
  const endpoint = { OPENAI_BASE_URL: '', OPENAI_API_KEY: 'the-key' };

  it('refuses a local path that is not a folder', async () => {
    const missing = path.join(dataDir, 'no-such-repo');
    const r = await start({ ...endpoint, OPENAI_BASE_URL: llm.url, OPENAI_MODEL: 'llama3.1:8b' }, ['--local', DEMO_REPO, '--local', missing]);
    expect(r).toEqual({ code: 2, stdout: '', stderr: `start: local source not found: ${missing} (no such folder); nothing was started` });
    expect(() => checkLocalSources([{ kind: 'local', path: path.join(DEMO_REPO, 'LICENSE') }])).toThrow(/not a folder/);
  });

  it('refuses a model the endpoint does not serve, naming the ones it does', async () => {
    const r = await start({ ...endpoint, OPENAI_BASE_URL: llm.url, OPENAI_MODEL: 'gpt-4o' });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`start: model gpt-4o not served by the LLM endpoint at ${llm.url}; it serves: qwen2.5-coder:7b, llama3.1:8b. Set OPENAI_MODEL (llm.model), or llm.models.<step>, to a served name; nothing was started`);
    // A step's own model is checked too.
    await expect(checkEndpoint({ baseUrl: llm.url, apiKey: 'the-key' }, ['llama3.1:8b', 'qwen2.5-coder:14b'])).rejects.toThrow(/model qwen2\.5-coder:14b not served/);
    await expect(checkEndpoint({ baseUrl: llm.url, apiKey: 'the-key' }, ['llama3.1:8b'])).resolves.toEqual({ served: ['qwen2.5-coder:7b', 'llama3.1:8b'] });
  });

  it('refuses an endpoint that does not answer', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/v1`;
    const r = await start({ ...endpoint, OPENAI_BASE_URL: closed, OPENAI_MODEL: 'llama3.1:8b' });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^start: no LLM endpoint answers at ${closed.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(.+\\): start the server, or point OPENAI_BASE_URL \\(llm.baseUrl\\) at one; nothing was started$`));
  });

  it('refuses a key the endpoint refuses', async () => {
    const r = await start({ ...endpoint, OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'wrong', OPENAI_MODEL: 'llama3.1:8b' });
    expect(r).toEqual({ code: 2, stdout: '', stderr: `start: the LLM endpoint at ${llm.url} refused the API key (HTTP 401): set OPENAI_API_KEY (llm.apiKey); nothing was started` });
  });
});
