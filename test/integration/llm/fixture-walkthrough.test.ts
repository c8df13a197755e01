/**
 * Walks the scripted fixture for one RepoST function through the gateway the way the function
 * workflow will: render, chat, parse, sanity-check, regenerate on an unusable answer.
 */
import { LocalStore } from '../../../activities/store/local';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LlmGateway, parseCodeAnswer, parseVerdict, renderPrompt } from '../../../activities/llm';
import { checkSandboxScript, checkTestScript } from '../../../activities/llm/sanity';
import { loadLlmScript, startScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import { storeFor, tempDataDir, testConfig } from './helpers';
import { REPOST_SAMPLE } from '../../support/fixtures';

const record = fs
  .readFileSync(REPOST_SAMPLE, 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { func_name: string; func_path: string; orig_func: string; orig_context: string })
  .find((r) => r.func_name === 'extract_all_zip_codes')!;

it('sandbox (one regeneration), tests, debug and both checks for extract_all_zip_codes, then a free re-run', async () => {
  const dataDir = tempDataDir();
  const server = await startScriptedLlmServer(loadLlmScript(path.join(__dirname, '../../fixtures/scripted-llm/repost-zip-codes.json')));
  try {
    const config = testConfig(server.url, dataDir);
    const gateway = new LlmGateway(config, storeFor(config));
    const functionId = 'fn-zip';
    const name = record.func_name;
    const call = async (p: ReturnType<typeof renderPrompt>, attempt = 0) =>
      gateway.chat({ step: p.step, functionId, messages: p.messages, promptId: p.promptId, promptVersion: p.promptVersion, attempt });

    // Sandbox: the first answer abbreviates the file, the regeneration is usable.
    const sandboxPrompt = renderPrompt('sandbox', { functionName: name, filePath: record.func_path, context: record.orig_context });
    const first = parseCodeAnswer((await call(sandboxPrompt)).text);
    expect(first).toMatchObject({ ok: false, failure: 'abbreviated' });
    const second = await call(sandboxPrompt, 1);
    const sandbox = parseCodeAnswer(second.text, second.finishReason);
    if (!sandbox.ok) throw new Error(sandbox.detail);
    expect(checkSandboxScript({ functionName: name, originalFunction: record.orig_func, context: record.orig_context, script: sandbox.code }).passed).toBe(true);

    // Tests: statically fine (the broken import only shows when run), then one debug round.
    const tests = parseCodeAnswer((await call(renderPrompt('tests', { functionName: name, script: sandbox.code }))).text);
    if (!tests.ok) throw new Error(tests.detail);
    expect(checkTestScript({ functionName: name, originalFunction: record.orig_func, sandboxScript: sandbox.code, script: tests.code }).passed).toBe(true);
    const debugged = parseCodeAnswer(
      (await call(renderPrompt('debug', { functionName: name, script: tests.code, errorMessage: "NameError: name 'List' is not defined" }))).text,
    );
    if (!debugged.ok) throw new Error(debugged.detail);
    expect(debugged.code).toContain('from typing import');
    expect(debugged.bash).toBeNull();

    // Final checks.
    const same = parseVerdict((await call(renderPrompt('check_functionality', { originalFunction: record.orig_func, sandboxedFunction: debugged.code }))).text);
    expect(same).toMatchObject({ ok: true, answer: 'same' });
    const good = parseVerdict((await call(renderPrompt('check_tests', { functionName: name, script: debugged.code }))).text, ['yes', 'no']);
    expect(good).toMatchObject({ ok: true, answer: 'yes' });

    const exchanges = await new LocalStore(dataDir).listExchanges(functionId);
    expect(exchanges.map((e) => `${e.step}#${e.attempt}`)).toEqual(['sandbox#0', 'sandbox#1', 'tests#0', 'debug#0', 'check_functionality#0', 'check_tests#0']);
    expect(exchanges.every((e) => /^\d+$/.test(e.promptVersion ?? '') && !e.cached)).toBe(true);

    // Re-running the same work against an endpoint that knows no answers costs nothing:
    // every call is answered from the cache, and recorded as such.
    const empty = await startScriptedLlmServer({ rules: [] });
    try {
      const rerunConfig = testConfig(empty.url, dataDir);
      const rerun = new LlmGateway(rerunConfig, storeFor(rerunConfig));
      const replayed = [];
      for (const e of exchanges) {
        const original = await storeFor(config).getJson<{ request: { messages: { role: 'system' | 'user' | 'assistant'; content: string }[] } }>(e.exchangeKey);
        replayed.push(await rerun.chat({ step: e.step as 'sandbox', functionId, messages: original.request.messages, attempt: e.attempt }));
      }
      expect(empty.requests).toHaveLength(0);
      expect(replayed.every((o) => o.cached && o.promptTokens === 0 && o.completionTokens === 0 && o.costUsd === 0)).toBe(true);
      expect((await new LocalStore(dataDir).listExchanges(functionId)).filter((e) => e.cached)).toHaveLength(exchanges.length);
    } finally {
      await empty.close();
    }
  } finally {
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
