/**
 * The verification server for real: `scripts/serve.ts` in its own process on the real sandbox
 * image and Docker engine, called with SandboxFusion's own Python client (PyPI sandbox-fusion,
 * installed by the setup script), with the exact request verl's helper builds, and with plain
 * HTTP. Right answers reward 1 and wrong ones 0; the ways to game a verdict (calling the original
 * by name or through the caller's frames, a value equal to everything, ending the process) reward
 * 0 with their kind; a flood past the queue gets 429 and every request it accepted completes; a
 * request without the bearer token gets 401; a sandbox container killed under the server is
 * replaced and the next requests pass.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { LABELS } from '../../activities/sandbox/container-spec';
import { fenced, returnNone } from '../support/eval-scripts';
import { DEMO_DATASET, REPOST_SAMPLE } from '../support/fixtures';
import { post, startServe, type Served } from '../support/serve-process';

const ROOT = path.resolve(__dirname, '../..');
const CLIENT_PATH = path.join(ROOT, '.tools/sandbox-fusion');
const run = promisify(execFile);

const demo = fs
  .readFileSync(DEMO_DATASET, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as { function_id: string; qualname: string; orig_func: string });
const words = demo.find((r) => r.qualname === 'word_frequencies')!;
const repost = fs
  .readFileSync(REPOST_SAMPLE, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Record<string, unknown> & { idx: string | number; orig_func: string });
const zipCodes = repost.find((r) => String(r.idx) === '301')!;

/** Ways an answer could try to win without doing the work, each with the kind its verdict names. */
const ATTACKS: { name: string; code: string; kind: string }[] = [
  { name: 'calls the original by its name', code: 'def word_frequencies(text, top=None):\n    return word_frequencies(text, top)', kind: 'exception' },
  {
    name: "looks for the original in its callers' frames",
    code: [
      'def word_frequencies(text, top=None):',
      '    import sys',
      '    for depth in range(1, 30):',
      '        try:',
      '            g = sys._getframe(depth).f_globals',
      '        except ValueError:',
      '            break',
      '        f = g.get("word_frequencies")',
      '        if callable(f) and getattr(f, "__code__", None) is not word_frequencies.__code__:',
      '            return f(text, top)',
      '    raise LookupError("no original in reach")',
    ].join('\n'),
    kind: 'exception',
  },
  {
    name: 'returns a value equal to everything',
    // Made a module-level class from inside the function (the answer's preamble keeps functions and imports only).
    code: [
      'def word_frequencies(text, top=None):',
      '    class Anything(list):',
      '        def __eq__(self, other):',
      '            return True',
      '        __hash__ = None',
      '    Anything.__qualname__ = "Anything"',
      '    globals()["Anything"] = Anything',
      '    return Anything()',
    ].join('\n'),
    kind: 'forbidden_value',
  },
  { name: 'ends its process with os._exit(0)', code: 'def word_frequencies(text, top=None):\n    import os\n    os._exit(0)', kind: 'candidate_exit' },
];

describe('the verification server (scripts/serve.ts)', () => {
  let dataDir: string;
  const docker = new Docker();

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-serve-'));
  });

  afterAll(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describe('without a token', () => {
    let served: Served;

    beforeAll(async () => {
      served = await startServe(['--dataset', `demo=${DEMO_DATASET}`, '--pool-size', '2'], dataDir);
    });

    afterAll(async () => {
      await served.stop();
      const left = await docker.listContainers({ all: true, filters: { label: [`${LABELS.sandbox}=1`, `${LABELS.worker}=${served.workerPrefix}`] } });
      expect(left).toHaveLength(0);
    });

    test("SandboxFusion's own Python client runs code: stdout, stdin, files, a failure, a time limit, fetch_files", async () => {
      const script = [
        'import base64, json, sys',
        'from sandbox_fusion import RunCodeRequest, run_code, set_sandbox_endpoint',
        'set_sandbox_endpoint(sys.argv[1])',
        'out = {}',
        'r = run_code(RunCodeRequest(code="import sys\\nprint(sum(int(x) for x in sys.stdin.read().split()))", stdin="1 2 3", language="python"), max_attempts=1)',
        'out["sum"] = [r.status.value, r.run_result.status.value, r.run_result.return_code, r.run_result.stdout]',
        'f = run_code(RunCodeRequest(code="print(open(\'data/in.txt\').read())", files={"data/in.txt": base64.b64encode(b"from a file").decode()}, language="python"), max_attempts=1)',
        'out["file"] = [f.status.value, f.run_result.stdout]',
        'e = run_code(RunCodeRequest(code="raise ValueError(\'no\')", language="python"), max_attempts=1)',
        'out["error"] = [e.status.value, e.run_result.return_code, e.run_result.stderr.strip().splitlines()[-1]]',
        't = run_code(RunCodeRequest(code="while True:\\n    pass", language="python", run_timeout=2), max_attempts=1)',
        'out["timeout"] = [t.status.value, t.run_result.status.value]',
        // fetch_files: the files the code wrote come back base64; a missing one is left out, as SandboxFusion does.
        'w = run_code(RunCodeRequest(code="import os\\nos.makedirs(\'out\', exist_ok=True)\\nopen(\'out/r.txt\', \'w\').write(\'written\')\\nprint(\'wrote\')", language="python", fetch_files=["out/r.txt", "missing.txt"]), max_attempts=1)',
        'out["fetch"] = [w.status.value, w.run_result.stdout, {k: base64.b64decode(v).decode() for k, v in w.files.items()}]',
        '# A path out of the run folder is refused (SandboxError, which the client raises).',
        'try:',
        '    run_code(RunCodeRequest(code="print(1)", language="python", fetch_files=["../../etc/passwd"]), max_attempts=1)',
        '    out["fetch_escape"] = "answered"',
        'except Exception as exc:',
        '    out["fetch_escape"] = str(exc)',
        'print(json.dumps(out))',
      ].join('\n');
      const { stdout } = await run('python3', ['-c', script, served.url], { env: { ...process.env, PYTHONPATH: CLIENT_PATH }, timeout: 180_000 });
      const out = JSON.parse(stdout.trim().split('\n').pop()!);
      expect(out.sum).toEqual(['Success', 'Finished', 0, '6\n']);
      expect(out.file).toEqual(['Success', 'from a file\n']);
      expect(out.error).toEqual(['Failed', 1, 'ValueError: no']);
      expect(out.timeout).toEqual(['Failed', 'TimeLimitExceeded']);
      expect(out.fetch).toEqual(['Success', 'wrote\n', { 'out/r.txt': 'written' }]);
      expect(out.fetch_escape).toMatch(/fetch_files: "\.\.\/\.\.\/etc\/passwd" is not allowed/);
    });

    test("verl's request (its helper's exact body, posted to the URL verl is given) and the refusals", async () => {
      // verl's call_sandbox_api posts this body to reward_model.sandbox_fusion.url as it is.
      const verl = await post(`${served.url}/run_code`, { compile_timeout: 10, run_timeout: 10, code: 'print(input()[::-1])', stdin: 'abc', language: 'python', files: {}, fetch_files: [] });
      expect(verl.status).toBe(200);
      expect(verl.json).toMatchObject({ status: 'Success', run_result: { status: 'Finished', return_code: 0, stdout: 'cba\n' } });
      const cpp = await post(`${served.url}/run_code`, { code: 'int main(){}', language: 'cpp' });
      expect(cpp.json).toMatchObject({ status: 'SandboxError', run_result: null });
      const escape = await post(`${served.url}/run_code`, { code: 'print(1)', language: 'python', files: { '../../etc/x': 'eA==' } });
      expect(escape.json.status).toBe('SandboxError');
      expect(escape.json.message).toMatch(/not allowed/);
      expect((await post(`${served.url}/run_code`, '{not json')).status).toBe(400);
      expect((await post(`${served.url}/verify`, { dataset: '../../etc', id: 'x', completion: 'x' })).status).toBe(404);
      expect((await post(`${served.url}/verify`, { dataset: 'demo', id: 'nope', completion: 'x' })).status).toBe(404);
      expect((await post(`${served.url}/verify`, { dataset: 'demo', completion: 'x' })).status).toBe(400);
    });

    test('/verify: the ground truth rewards 1, a wrong answer 0, a record given inline too', async () => {
      const right = await post(`${served.url}/verify`, { dataset: 'demo', id: words.function_id, completion: fenced(words.orig_func) });
      expect(right.status).toBe(200);
      expect(right.json).toMatchObject({ reward: 1, passed: true, kind: null });
      expect(right.json.tests[0].testFunctions.length).toBeGreaterThan(0);
      expect(right.json.duration).toBeGreaterThan(0);
      expect(right.json.tests[0].duration).toBe(right.json.duration);
      const wrong = await post(`${served.url}/verify`, { dataset: 'demo', id: words.function_id, completion: fenced(returnNone(words.orig_func)) });
      expect(wrong.json).toMatchObject({ reward: 0, passed: false });
      expect(['assertion', 'exception', 'wrong_type']).toContain(wrong.json.kind);
      const none = await post(`${served.url}/verify`, { dataset: 'demo', id: words.function_id, completion: 'I would rather not.' });
      expect(none.json).toMatchObject({ reward: 0, kind: 'no_code' });
      const inline = await post(`${served.url}/verify`, { record: zipCodes, completion: fenced(zipCodes.orig_func) });
      expect(inline.json).toMatchObject({ reward: 1, passed: true });
      const inlineWrong = await post(`${served.url}/verify`, { record: zipCodes, completion: fenced(returnNone(zipCodes.orig_func)) });
      expect(inlineWrong.json).toMatchObject({ reward: 0, passed: false });
    });

    test.each(ATTACKS)('an answer that $name rewards 0 ($kind)', async ({ code, kind }) => {
      const res = await post(`${served.url}/verify`, { dataset: 'demo', id: words.function_id, completion: fenced(code) });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ reward: 0, passed: false, kind });
    });

    test('a sandbox container killed under the server is replaced: the next requests pass', async () => {
      const mine = await docker.listContainers({ filters: { label: [`${LABELS.sandbox}=1`, `${LABELS.worker}=${served.workerPrefix}`] } });
      expect(mine.length).toBeGreaterThan(0);
      // Killed while a request runs on it, and the others idle.
      const during = post(`${served.url}/run_code`, { code: 'import time\ntime.sleep(3)\nprint("slept")', language: 'python' });
      await new Promise((r) => setTimeout(r, 1000));
      for (const c of mine) await docker.getContainer(c.Id).kill().catch(() => undefined);
      const answered = await during;
      // The run in a killed container is tried again on a fresh one.
      expect(answered.status).toBe(200);
      expect(answered.json).toMatchObject({ status: 'Success', run_result: { stdout: 'slept\n' } });
      for (let i = 0; i < 3; i++) {
        const res = await post(`${served.url}/verify`, { dataset: 'demo', id: words.function_id, completion: fenced(words.orig_func) });
        expect(res.json).toMatchObject({ reward: 1 });
      }
      const metrics = await (await fetch(`${served.url}/metrics`)).json();
      expect(metrics.pool).toMatchObject({ state: 'up', mode: 'pool' });
      expect(metrics.pool.containersCreated).toBeGreaterThan(mine.length);
      expect((await fetch(`${served.url}/health`)).status).toBe(200);
    });
  });

  describe('with a token, one run at a time and two waiting', () => {
    let served: Served;
    const token = 'serve-test-token-0123456789';
    const auth = { Authorization: `Bearer ${token}` };

    beforeAll(async () => {
      served = await startServe(['--token', token, '--pool-size', '1', '--max-in-flight', '1', '--max-queued', '2', '--max-body-bytes', '65536'], dataDir);
    });

    afterAll(async () => {
      await served.stop();
    });

    test('a request without the bearer token, or with another, is refused (401); /health needs none', async () => {
      const body = { code: 'print(1)', language: 'python' };
      const none = await post(`${served.url}/run_code`, body);
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer');
      expect((await post(`${served.url}/run_code`, body, { Authorization: 'Bearer not-the-token' })).status).toBe(401);
      expect((await fetch(`${served.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${served.url}/health`)).status).toBe(200);
      const ok = await post(`${served.url}/run_code`, body, auth);
      expect(ok.json).toMatchObject({ status: 'Success', run_result: { stdout: '1\n' } });
    });

    test('a body over the limit is refused (413)', async () => {
      const big = await post(`${served.url}/run_code`, { code: `# ${'x'.repeat(70_000)}\nprint(1)`, language: 'python' }, auth);
      expect(big.status).toBe(413);
    });

    test('a flood past the queue gets 429 with Retry-After; every request accepted completes with its own answer', async () => {
      const flood = await Promise.all(Array.from({ length: 10 }, (_, i) => post(`${served.url}/run_code`, { code: `import time\ntime.sleep(1)\nprint(${i})`, language: 'python' }, auth)));
      const refused = flood.filter((r) => r.status === 429);
      const accepted = flood.map((r, i) => ({ r, i })).filter(({ r }) => r.status !== 429);
      expect(refused.length).toBeGreaterThan(0);
      expect(accepted.length).toBeGreaterThanOrEqual(3);
      for (const r of refused) expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      for (const { r, i } of accepted) {
        expect(r.status).toBe(200);
        expect(r.json).toMatchObject({ status: 'Success', run_result: { stdout: `${i}\n` } });
      }
      const metrics = await (await fetch(`${served.url}/metrics`, { headers: auth })).json();
      expect(metrics.requests['/run_code']['429']).toBe(refused.length);
      expect(metrics.queue).toEqual({ depth: 0, max: 2 });
      expect(metrics.inFlight).toEqual({ now: 0, max: 1 });
      expect(metrics.latencyMs.p50).toBeGreaterThan(0);
      const text = await (await fetch(`${served.url}/metrics?format=prometheus`, { headers: auth })).text();
      expect(text).toMatch(/^repost_serve_requests_total\{endpoint="\/run_code",status="429"\} \d+$/m);
      expect(text).toMatch(/^repost_serve_pool_up 1$/m);
    });
  });
});
