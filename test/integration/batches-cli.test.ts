/**
 * `tsx scripts/batches.ts` as a user runs it, in its own process, on a data directory holding
 * file-exchange batches: listing what waits, showing one batch, and importing a results file
 * made elsewhere, with its exit codes (0 done, 1 failed, 2 bad usage).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BatchFolders, FileExchangeBackend, batchRequestLine } from '../../activities/llm/batch';
import { cleanEnv, runScript } from '../support/processes';

const SCRIPT = 'scripts/batches.ts';

/** An answer line as `vllm run-batch` writes it (fixture). */
const answer = (customId: string, text: string) =>
  JSON.stringify({ id: `vllm-${customId}`, custom_id: customId, response: { status_code: 200, request_id: `vllm-batch-${customId}`, body: { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2 } } }, error: null });

describe('tsx scripts/batches.ts', () => {
  let dataDir: string;
  const run = (...args: string[]) => runScript(SCRIPT, args, { env: cleanEnv({ REPOST_DATA_DIR: dataDir }), exactEnv: true, timeoutMs: 60_000 });
  const line = (id: string, model = 'qwen-coder') => batchRequestLine(id, { model, messages: [{ role: 'user', content: `Function: ${id}\nplease` }], temperature: 0, maxTokens: 64 });

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-batches-cli-'));
    const backend = new FileExchangeBackend(new BatchFolders(dataDir), () => new Date(Date.now() - 3 * 3600_000));
    await backend.submit({ id: 'b-old', lines: [line('a'), line('b'), line('c', 'other-model')] });
    await backend.submit({ id: 'b-done', lines: [line('d')] });
    fs.writeFileSync(path.join(dataDir, 'llm-batches', 'b-done', 'results.jsonl'), `${answer('d', 'fixture answer')}\n`);
    expect((await backend.poll('b-done')).state).toBe('ended');
    fs.mkdirSync(path.join(dataDir, 'llm-batches', 'Not_A_Batch'));
    fs.mkdirSync(path.join(dataDir, 'llm-batches', 'evil\u001b[2J'));
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('lists the waiting batches with backend, age, requests and folder; --all adds ended ones; --json for programs', async () => {
    const waiting = await run('list');
    expect(waiting.code).toBe(0);
    const root = path.join(dataDir, 'llm-batches');
    expect(waiting.stdout).toContain(`1 batch(es) waiting in ${root}, 1 ended (--all shows them)`);
    expect(waiting.stdout).toMatch(new RegExp(`b-old\\s+files\\s+waiting for results\\s+3h00m\\s+3\\s+${root}/b-old`));
    expect(waiting.stdout).not.toContain('b-done');
    expect(waiting.stderr).toContain('not a batch: Not_A_Batch: not a batch id');
    // A name from outside reaches the terminal with its control characters shown, not obeyed.
    expect(waiting.stderr).toContain('not a batch: evil\\u001b[2J');
    expect(waiting.stderr).not.toContain('\u001b');

    const all = await run('list', '--all');
    expect(all.stdout).toMatch(/b-done\s+files\s+ended completed/);

    const json = JSON.parse((await run('list', '--json')).stdout);
    expect(json.batches.map((b: { id: string; requests: number; folder: string }) => [b.id, b.requests, b.folder])).toEqual([['b-old', 3, `${root}/b-old`]]);
    expect(json.batches[0].ageMs).toBeGreaterThanOrEqual(3 * 3600_000);
  });

  it('shows one batch: its files, models, and how to answer it', async () => {
    const shown = await run('show', 'b-old');
    expect(shown.code).toBe(0);
    const folder = path.join(dataDir, 'llm-batches', 'b-old');
    expect(shown.stdout).toContain('batch b-old (files backend): waiting for results');
    expect(shown.stdout).toContain('models: qwen-coder 2, other-model 1');
    expect(shown.stdout).toContain(`requests  ${folder}/requests.jsonl: 3 line(s)`);
    expect(shown.stdout).toContain(`results   ${folder}/results.jsonl (not there)`);
    expect(shown.stdout).toContain(`vllm run-batch -i ${folder}/requests.jsonl -o ${folder}/results.jsonl`);
    expect(JSON.parse((await run('show', 'b-done', '--json')).stdout).manifest).toMatchObject({ state: 'ended', endStatus: 'completed' });
  });

  it('refuses what it cannot act on with exit 2 and nothing done', async () => {
    for (const args of [[], ['frobnicate'], ['show'], ['show', 'b-none'], ['show', '../../etc'], ['list', '--batch', 'b-old'], ['list', '--bogus']]) {
      const r = await run(...args);
      expect([args, r.code]).toEqual([args, 2]);
      expect(r.stderr).toMatch(/\(see --help\)\n$/);
    }
    const help = await run('--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('tsx scripts/batches.ts import FILE [--batch ID] [--partial]');
  });

  it('imports a results file into the batch that asked it, after checking every line', async () => {
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-batches-out-'));
    const file = path.join(elsewhere, 'out.jsonl');
    fs.writeFileSync(file, `${answer('a', 'x')}\n{"custom_id": "b",\n`);
    const broken = await run('import', file);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(new RegExp(`^batches: ${file} line 2 is not JSON`));
    // A results file that is not there: a command-line mistake (exit 2), in the common form.
    const none = path.join(elsewhere, 'none.jsonl');
    const missing = await run('import', none);
    expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 2, stderr: `batches: no such results file: ${none} (see --help)\n` });

    fs.writeFileSync(file, `${answer('a', 'x')}\n${answer('b', 'y')}\n`);
    const partial = await run('import', file);
    expect(partial.code).toBe(1);
    expect(partial.stderr).toContain("answers 2 of batch b-old's 3 requests; give --partial");
    expect(fs.existsSync(path.join(dataDir, 'llm-batches', 'b-old', 'results.jsonl'))).toBe(false);

    const done = await run('import', file, '--partial');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain(`loaded 2 answer(s) of batch b-old's 3 request(s) into ${path.join(dataDir, 'llm-batches', 'b-old', 'results.jsonl')}`);
    expect(done.stdout).toContain('partial: the other 1 request(s) end without an answer and are asked again');
    expect((await run('show', 'b-old')).stdout).toContain(`imported  2 answer(s) from ${file}`);

    const again = await run('import', file, '--partial', '--batch', 'b-old');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already has .*results\.jsonl; nothing was changed/);
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });
});
