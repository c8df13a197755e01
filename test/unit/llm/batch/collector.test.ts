/**
 * The collector on the file exchange backend, with an injected clock and a recorded completion:
 * requests flushed by count and by age, everything it knows kept in files (a second collector
 * over the same data directory picks the batches up), and each answer delivered once, a success
 * completing its attempt and a retryable status failing it, exactly as the live path would.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BatchFolders, FileExchangeBackend } from '../../../../activities/llm/batch';
import { BatchCollector, readWaitingRequests, summarizeWaiting, type PendingRequest } from '../../../../activities/llm/batch/collector';
import { LlmTransientError } from '../../../../activities/llm/errors';
import type { DeliveredBatchAnswer } from '../../../../activities/llm/gateway';

/** A completion body as an endpoint sends it (fixture). */
const completion = (text: string) => ({ id: 'c', model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 2 } });

function setUp(dataDir: string, clock: { now: number }) {
  const completed: { token: string; result: unknown }[] = [];
  const failed: { token: string; message: string }[] = [];
  const delivered: string[] = [];
  const collector = new BatchCollector({
    dataDir,
    backend: new FileExchangeBackend(new BatchFolders(dataDir), () => new Date(clock.now)),
    policy: { maxRequests: 2, maxBytes: 1_000_000, maxWaitSec: 60 },
    pollMs: 3_600_000,
    clock: () => clock.now,
    completion: {
      complete: async (token, result) => void completed.push({ token: Buffer.from(token).toString(), result }),
      fail: async (token, err) => void failed.push({ token: Buffer.from(token).toString(), message: err.message }),
    },
    // The activity run again with the answer: its text as the result, or the answer's error.
    deliver: async (p: PendingRequest, answer: DeliveredBatchAnswer) => {
      delivered.push(p.customId);
      if (!answer.outcome.ok) throw answer.outcome.error;
      return { text: answer.outcome.completion.text, input: p.input };
    },
  });
  return { collector, completed, failed, delivered };
}

const request = (n: number) => ({
  taskToken: Buffer.from(`token-${n}`).toString('base64'),
  activityType: 'generateTests',
  input: { n },
  cacheKey: `key-${n}`,
  step: 'tests',
  functionId: `fn-${n}`,
  runId: 'run-1',
  line: BatchCollector.lineOf({ model: 'm', messages: [{ role: 'user', content: `question ${n}` }], temperature: 0, maxTokens: 100 }),
});

describe('BatchCollector', () => {
  it('flushes by count and by age, survives a restart through its files, and delivers each answer once', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-collector-'));
    const clock = { now: Date.parse('2026-11-24T10:00:00Z') };
    const first = setUp(dataDir, clock);
    await first.collector.start();
    const asked = [request(1), request(2), request(3)];
    for (const r of asked) await first.collector.enqueue(r);
    const folders = new BatchFolders(dataDir);
    // Two requests fill a batch; the third waits for more, until a minute has passed.
    expect((await folders.list()).batches.map((b) => b.requests)).toEqual([2]);
    expect(summarizeWaiting(await readWaitingRequests(dataDir, 'run-1'), clock.now)).toEqual({ waiting: 3, batches: 1, unsent: 1, oldestAgeMs: 0 });
    clock.now += 61_000;
    await first.collector.tick();
    const batches = (await folders.list()).batches.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    expect(batches.map((b) => b.requests)).toEqual([2, 1]);
    await first.collector.stop();

    // A new process: it knows only the files.
    const second = setUp(dataDir, clock);
    await second.collector.start();
    expect(second.collector.waitingRequests().map((w) => w.batchId).sort()).toEqual([batches[0]!.id, batches[0]!.id, batches[1]!.id].sort());
    // The first batch is answered elsewhere: one answer, one rate-limited line.
    const [a, b] = asked.map((r) => r.line.custom_id);
    fs.writeFileSync(
      folders.pathOf(batches[0]!.id, 'results'),
      [
        { id: '1', custom_id: a, response: { status_code: 200, request_id: 'r1', body: completion('answer one') }, error: null },
        { id: '2', custom_id: b, response: { status_code: 429, request_id: 'r2', body: { error: { message: 'slow down' } } }, error: null },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n',
    );
    await second.collector.tick();
    await second.collector.tick();
    expect(second.delivered).toEqual([a, b]);
    expect(second.completed).toEqual([{ token: 'token-1', result: { text: 'answer one', input: { n: 1 } } }]);
    expect(second.failed).toHaveLength(1);
    expect(second.failed[0]!.token).toBe('token-2');
    expect(second.failed[0]!.message).toContain('slow down');
    // Only the unanswered batch's request still waits; its file is all that is left.
    expect(second.collector.waitingRequests().map((w) => w.customId)).toEqual([asked[2]!.line.custom_id]);
    expect(fs.readdirSync(path.join(dataDir, 'llm-pending'))).toEqual([`${asked[2]!.line.custom_id}.json`]);
    await second.collector.stop();
    expect(first.delivered).toEqual([]);
  });

  it("delivers a 503 line as the live path's error for it (retryable)", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-collector-'));
    const clock = { now: Date.parse('2026-11-24T10:00:00Z') };
    const errors: unknown[] = [];
    const { collector } = setUp(dataDir, clock);
    const original = (collector as unknown as { options: { deliver: (p: PendingRequest, a: DeliveredBatchAnswer) => Promise<unknown> } }).options;
    const deliver = original.deliver;
    original.deliver = async (p, answer) => {
      if (!answer.outcome.ok) errors.push(answer.outcome.error);
      return deliver(p, answer);
    };
    await collector.start();
    const r = request(7);
    await collector.enqueue(r);
    clock.now += 61_000;
    await collector.tick();
    const [batch] = (await new BatchFolders(dataDir).list()).batches;
    fs.writeFileSync(new BatchFolders(dataDir).pathOf(batch!.id, 'results'), JSON.stringify({ id: '1', custom_id: r.line.custom_id, response: { status_code: 503, request_id: 'r', body: 'busy' }, error: null }) + '\n');
    await collector.tick();
    await collector.tick();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(LlmTransientError);
    await collector.stop();
  });
});
