import type { EvalRecord } from '../../../activities/eval/dataset';
import { ServedDatasets, VerificationServer } from '../../../activities/serve/http';
import { Admission, DeadlinePassedError, QueueFullError } from '../../../activities/serve/admission';
import { fakeTimers } from '../../support/fake-clock';
import { LatencyWindow } from '../../../activities/serve/latency';
import { FETCH_MARKER, MAX_FETCH_FILES, RUNNER_FILE, RunCodeRefusal, RunCodeRequestSchema, runCodePlan, runCodeResponse, takeFetched } from '../../../activities/serve/run-code';
import { SandboxResultSchema } from '../../../activities/sandbox/schema';

describe('Admission', () => {
  it('runs at most maxInFlight, queues maxQueued, refuses past that at once, and finishes everything admitted', async () => {
    const admission = new Admission(2, 1);
    const releases: (() => void)[] = [];
    const started: number[] = [];
    const task = (i: number) => () => new Promise<number>((resolve) => { started.push(i); releases.push(() => resolve(i)); });
    const admitted = [admission.run(task(1)), admission.run(task(2)), admission.run(task(3))];
    await expect(admission.run(task(4))).rejects.toBeInstanceOf(QueueFullError);
    await Promise.resolve();
    expect(started).toEqual([1, 2]);
    expect(admission.inFlight).toBe(2);
    expect(admission.queued).toBe(1);
    releases.shift()!();
    await admitted[0];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([1, 2, 3]);
    releases.splice(0).forEach((r) => r());
    await new Promise((r) => setImmediate(r));
    releases.splice(0).forEach((r) => r());
    expect(await Promise.all(admitted)).toEqual([1, 2, 3]);
    expect(admission.inFlight).toBe(0);
    expect(admission.queued).toBe(0);
  });
});

describe('Admission deadlines', () => {
  const settle = () => new Promise((r) => setImmediate(r));

  it('answers a waiting request when its own deadline passes, wherever it is in the queue, and frees its slot', async () => {
    const timers = fakeTimers();
    const admission = new Admission(1, 2, timers);
    let release!: () => void;
    const started: string[] = [];
    const long = admission.run(() => new Promise<string>((resolve) => { started.push('long'); release = () => resolve('long'); }), 100_000);
    // Second in the queue with a short limit, behind one with a long limit.
    const first = admission.run(async () => { started.push('first'); return 'first'; }, 50_000);
    const second = admission.run(async () => { started.push('second'); return 'second'; }, 10_000);
    const secondOutcome = second.then(() => 'ran', (e: unknown) => e);
    expect(admission.queued).toBe(2);
    await expect(admission.run(async () => 'over')).rejects.toBeInstanceOf(QueueFullError);

    timers.advance(9_999);
    await settle();
    expect(admission.queued).toBe(2);
    timers.advance(1);
    await settle();
    expect(await secondOutcome).toBeInstanceOf(DeadlinePassedError);
    // Its slot in the queue is free at once: another request is accepted while the long one still runs.
    expect(admission.queued).toBe(1);
    const third = admission.run(async () => { started.push('third'); return 'third'; }, 100_000);
    expect(admission.queued).toBe(2);

    release();
    expect(await long).toBe('long');
    expect(await first).toBe('first');
    expect(await third).toBe('third');
    expect(started).toEqual(['long', 'first', 'third']);
    expect(admission.inFlight).toBe(0);
    expect(admission.queued).toBe(0);
    // Every deadline was cancelled once its request ended.
    expect(timers.pending).toBe(0);
  });

  it("aborts a running task's signal when its deadline passes; the slot is free once the task ends", async () => {
    const timers = fakeTimers();
    const admission = new Admission(1, 1, timers);
    let seen: AbortSignal | undefined;
    const running = admission.run((signal) => {
      seen = signal;
      return new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(new Error('cancelled'))));
    }, 1_000);
    const waiting = admission.run(async (signal) => (signal.aborted ? 'aborted' : 'ran'), 5_000);
    await settle();
    expect(seen?.aborted).toBe(false);
    timers.advance(1_000);
    await expect(running).rejects.toThrow('cancelled');
    expect(await waiting).toBe('ran');
    expect(admission.inFlight).toBe(0);
  });
});

describe('LatencyWindow', () => {
  it('gives nearest-rank percentiles, null when empty', () => {
    const w = new LatencyWindow(1000);
    expect(w.percentiles([50])).toEqual({ p50: null });
    for (let i = 1; i <= 100; i++) w.add(i);
    expect(w.percentiles([50, 99])).toEqual({ p50: 50, p99: 99 });
  });
});

describe('SandboxFusion run_code', () => {
  const defaults = { timeoutSec: 10, memoryMb: 1024 };
  const request = (over: Record<string, unknown>) => RunCodeRequestSchema.parse({ code: 'print(input())', language: 'python', ...over });

  it('runs the code from its own file with the request stdin, bounded timeout and files as text', () => {
    const plan = runCodePlan(request({ stdin: '5\n', run_timeout: 10_000, files: { 'data/x.txt': Buffer.from('hi').toString('base64') } }), defaults);
    expect(plan.files[RUNNER_FILE]).toBe('print(input())');
    expect(Object.values(plan.files)).toContain('5\n');
    expect(plan.files['data/x.txt']).toBe('hi');
    expect(plan.timeoutSec).toBe(120);
    expect(plan.script).toContain('runpy.run_path');
  });

  it('refuses other languages, escaping or reserved file names and binary files', () => {
    expect(() => runCodePlan(request({ language: 'cpp' }), defaults)).toThrow(RunCodeRefusal);
    for (const name of ['../x', '/etc/passwd', 'a/../../b', RUNNER_FILE]) expect(() => runCodePlan(request({ files: { [name]: '' } }), defaults)).toThrow(RunCodeRefusal);
    expect(() => runCodePlan(request({ files: { 'b.bin': Buffer.from([0xff, 0xfe]).toString('base64') } }), defaults)).toThrow(RunCodeRefusal);
  });

  it('fetch_files: plain relative paths only, a bounded count; without them the runner is the plain one', () => {
    for (const name of ['../x', '/etc/passwd', 'a/../../b', './x', 'a//b']) expect(() => runCodePlan(request({ fetch_files: [name] }), defaults)).toThrow(/fetch_files/);
    const many = Array.from({ length: MAX_FETCH_FILES + 1 }, (_, i) => `f${i}.txt`);
    expect(() => runCodePlan(request({ fetch_files: many }), defaults)).toThrow(RunCodeRefusal);
    const plan = runCodePlan(request({ fetch_files: ['out/r.txt', 'out/r.txt', 'b.txt'] }), defaults);
    expect(plan.fetch).toEqual(['out/r.txt', 'b.txt']);
    expect(plan.script).toContain('["out/r.txt","b.txt"]');
    expect(runCodePlan(request({ fetch_files: [] }), defaults).script).not.toContain('repost-fetched-files');
  });

  it("takes the fetched files off stdout's end: only names asked for, the too-large ones named, none when the runner's line is missing", () => {
    const line = (o: unknown) => `\n${FETCH_MARKER}${JSON.stringify(o)}\n`;
    const asked = ['out/r.txt', 'big.bin', 'missing.txt'];
    // The code's own output, including a forged line before the runner's (the last one counts).
    const stdout = `done\n${line({ files: { 'out/r.txt': 'Zm9yZ2Vk' }, over: [] })}${line({ files: { 'out/r.txt': 'aGVsbG8=', 'not/asked': 'eA==' }, over: ['big.bin'] })}`;
    const taken = takeFetched(stdout, asked);
    expect(taken.files).toEqual({ 'out/r.txt': 'aGVsbG8=' });
    expect(taken.message).toMatch(/over the \d+-byte limit.*big\.bin/);
    expect(taken.stdout).toBe(`done\n${line({ files: { 'out/r.txt': 'Zm9yZ2Vk' }, over: [] })}`);
    expect(takeFetched('done\n', asked)).toMatchObject({ stdout: 'done\n', files: {}, message: expect.stringMatching(/could not be collected/) });
    expect(takeFetched(`done${line({ files: { a: 'not base64!' }, over: [] })}`, ['a'])).toMatchObject({ files: {}, message: expect.stringMatching(/could not be collected/) });
    // Nothing asked: stdout is the code's, whatever it printed.
    const printed = `x${line({ files: {}, over: [] })}`;
    expect(takeFetched(printed, [])).toEqual({ stdout: printed, files: {}, message: '' });
  });

  it('answers in SandboxFusion shape: Success, Failed with the exit code, TimeLimitExceeded, SandboxError', () => {
    const base = { exitCode: 0, durationMs: 120, stdout: '5\n', stderr: '', truncated: false, exception: null, coverage: null, packages: [], notes: [] };
    expect(runCodeResponse(SandboxResultSchema.parse({ ...base, status: 'passed' }))).toMatchObject({ status: 'Success', run_result: { status: 'Finished', return_code: 0, stdout: '5\n', execution_time: 0.12 } });
    expect(runCodeResponse(SandboxResultSchema.parse({ ...base, status: 'error', exitCode: 1 }))).toMatchObject({ status: 'Failed', run_result: { status: 'Finished', return_code: 1 } });
    expect(runCodeResponse(SandboxResultSchema.parse({ ...base, status: 'timeout', exitCode: null }))).toMatchObject({ status: 'Failed', run_result: { status: 'TimeLimitExceeded', return_code: null } });
    expect(runCodeResponse(SandboxResultSchema.parse({ ...base, status: 'infrastructure', exitCode: null }))).toMatchObject({ status: 'SandboxError', run_result: null });
  });
});

describe("SandboxFusion clients' defaults", () => {
  it('a memory limit of -1 (the client default) and a run timeout of 0 mean the server defaults', () => {
    const plan = runCodePlan(RunCodeRequestSchema.parse({ code: 'print(1)', language: 'python', memory_limit_MB: -1, run_timeout: 0 }), { timeoutSec: 7, memoryMb: 512 });
    expect(plan.memoryMb).toBeNull();
    expect(plan.timeoutSec).toBe(7);
  });
});

describe('ServedDatasets', () => {
  const record = (functionId: string, idx: string) => ({ functionId, idx }) as EvalRecord;

  it('finds a record by function id or idx, and tells a missing dataset from a missing record', () => {
    const served = new ServedDatasets();
    served.add('demo', [record('aaa', '1'), record('bbb', '2')]);
    expect(served.find('demo', 'aaa')).toMatchObject({ functionId: 'aaa' });
    expect(served.find('demo', '2')).toMatchObject({ functionId: 'bbb' });
    expect(served.find('demo', 'ccc')).toBe('no-record');
    expect(served.find('../demo', 'aaa')).toBe('no-dataset');
    expect(served.size('demo')).toBe(2);
  });

  it('refuses a name that is not a plain name, and a name given twice', () => {
    const served = new ServedDatasets();
    for (const bad of ['../x', '.hidden', 'a/b', '', 'x'.repeat(101)]) expect(() => served.add(bad, [])).toThrow(/not allowed/);
    served.add('one', []);
    expect(() => served.add('one', [])).toThrow(/two datasets/);
  });
});

describe('VerificationServer metrics', () => {
  it('reports queue, in flight, latency and pool state as JSON and Prometheus text before any request', () => {
    const server = new VerificationServer({
      executor: { run: async () => { throw new Error('not called'); }, mode: 'pool', poolStats: { created: 2, recycled: 0 } },
      ping: async () => true,
      datasets: new ServedDatasets(),
      maxInFlight: 4,
      maxQueued: 8,
      maxBodyBytes: 1024,
      runTimeoutSec: 10,
      requestTimeoutSec: 30,
      limits: { memoryMb: 512, cpus: 1, pidsLimit: 128 },
      token: null,
    });
    expect(server.metrics()).toEqual({
      requests: {},
      verdicts: { passed: 0, failed: 0 },
      queue: { depth: 0, max: 8 },
      inFlight: { now: 0, max: 4 },
      latencyMs: { p50: null, p90: null, p99: null, samples: 0 },
      pool: { state: 'up', mode: 'pool', containersCreated: 2, containersRecycled: 0 },
    });
    expect(server.prometheus()).toMatch(/^repost_serve_pool_containers_created_total 2$/m);
    expect(server.prometheus()).not.toMatch(/repost_serve_latency_ms\{/);
  });
});

describe('VerificationServer probe', () => {
  it('goes down when a tick finds the engine silent, before any request fails, and up when it answers again', async () => {
    let answers = true;
    const lines: string[] = [];
    const server = new VerificationServer({
      executor: { run: async () => { throw new Error('not called'); }, mode: 'pool', poolStats: null },
      ping: async () => answers,
      datasets: new ServedDatasets(),
      maxInFlight: 1,
      maxQueued: 1,
      maxBodyBytes: 1024,
      runTimeoutSec: 10,
      requestTimeoutSec: 30,
      limits: { memoryMb: 512, cpus: 1, pidsLimit: 128 },
      token: null,
      log: (l) => lines.push(l),
    });
    await server.tick();
    expect(server.poolDown).toBe(false);
    answers = false;
    await server.tick();
    expect(server.poolDown).toBe(true);
    expect(server.metrics().pool).toMatchObject({ state: 'down' });
    await server.tick();
    answers = true;
    await server.tick();
    expect(server.poolDown).toBe(false);
    expect(lines).toEqual(['serve: the container engine does not answer; refusing runs (503) until it does', 'serve: the container engine answers again']);
  });
});
