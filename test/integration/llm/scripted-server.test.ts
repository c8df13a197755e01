import OpenAI from 'openai';
import { renderPrompt, type ChatMessage } from '../../../activities/llm';
import { loadLlmScript, startScriptedLlmServer, type ScriptedLlmServer } from '../../../scripts/scripted-llm/server';
import * as path from 'node:path';

/** The scripted server is exercised with the plain openai client, as any consumer would. */
describe('scripted OpenAI-compatible server', () => {
  let server: ScriptedLlmServer;
  afterEach(async () => server?.close());

  const client = (url: string) => new OpenAI({ baseURL: url, apiKey: 'k', maxRetries: 0, timeout: 5000 });
  const ask = async (c: OpenAI, messages: ChatMessage[]) => {
    const r = await c.chat.completions.create({ model: 'scripted', messages });
    return r.choices[0]!.message.content;
  };
  const prompt = (kind: 'sandbox' | 'tests', functionName: string) =>
    kind === 'sandbox'
      ? renderPrompt('sandbox', { functionName, filePath: 'a.py', context: `def ${functionName}():\n    pass\n` }).messages
      : renderPrompt('tests', { functionName, script: `def ${functionName}():\n    pass\n` }).messages;

  it('matches rules by prompt kind and function name, in rule order', async () => {
    server = await startScriptedLlmServer({
      rules: [
        { kind: 'sandbox', functionName: 'special', responses: ['special sandbox'] },
        { kind: 'sandbox', responses: ['generic sandbox for {{functionName}}'] },
        { functionName: 'special', responses: ['anything else for special'] },
      ],
      fallback: 'fallback',
    });
    const c = client(server.url);
    expect(await ask(c, prompt('sandbox', 'special'))).toBe('special sandbox');
    expect(await ask(c, prompt('sandbox', 'other'))).toBe('generic sandbox for other');
    expect(await ask(c, prompt('tests', 'special'))).toBe('anything else for special');
    expect(await ask(c, prompt('tests', 'other'))).toBe('fallback');
    expect(server.requests.map((r) => [r.kind, r.functionName, r.rule])).toEqual([
      ['sandbox', 'special', 0],
      ['sandbox', 'other', 1],
      ['tests', 'special', 2],
      ['tests', 'other', null],
    ]);
  });

  it('walks through responses in order per function, repeating the last one', async () => {
    server = await startScriptedLlmServer({ rules: [{ kind: 'sandbox', responses: ['first', 'second'] }] });
    const c = client(server.url);
    const a = [await ask(c, prompt('sandbox', 'f')), await ask(c, prompt('sandbox', 'g')), await ask(c, prompt('sandbox', 'f')), await ask(c, prompt('sandbox', 'f'))];
    expect(a).toEqual(['first', 'first', 'second', 'second']);
  });

  it("with respondBy 'turn' answers by the conversation's turn, so a request sent again gets the same answer", async () => {
    server = await startScriptedLlmServer({ rules: [{ kind: 'tests', respondBy: 'turn', responses: ['first answer', 'after a follow-up'] }] });
    const c = client(server.url);
    const first = prompt('tests', 'f');
    const followUp: ChatMessage[] = [...first, { role: 'assistant', content: 'first answer' }, { role: 'user', content: 'Your answer above cannot be used.' }];
    const a = [await ask(c, first), await ask(c, first), await ask(c, followUp), await ask(c, followUp), await ask(c, first)];
    expect(a).toEqual(['first answer', 'first answer', 'after a follow-up', 'after a follow-up', 'first answer']);
  });

  it('reads kind and function from plain requests without a marker', async () => {
    server = await startScriptedLlmServer({ rules: [{ kind: 'debug', functionName: 'g', responses: ['debugged'] }] });
    const c = client(server.url);
    const r = await c.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'Function: g\nplease fix' }] }, { headers: { 'x-repost-step': 'debug' } });
    expect(r.choices[0]!.message.content).toBe('debugged');
  });

  it('answers unmatched requests with a 400 that names kind and function', async () => {
    server = await startScriptedLlmServer({ rules: [] });
    await expect(ask(client(server.url), prompt('tests', 'h'))).rejects.toThrow(/no rule for kind=tests function=h/);
  });

  it('reports usage of about a token per four characters', async () => {
    server = await startScriptedLlmServer({ rules: [], fallback: 'x'.repeat(40) });
    const r = await client(server.url).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'y'.repeat(400) }] });
    expect(r.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 });
    expect(r.model).toBe('m');
  });

  it('lists a model and simulates latency', async () => {
    server = await startScriptedLlmServer({ rules: [], fallback: 'ok' }, { latencyMs: 150 });
    const c = client(server.url);
    const models = await c.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['scripted']);
    // Order, not a measured time: a timer of a fraction of the latency fires before the answer comes.
    const answered = ask(c, [{ role: 'user', content: 'hi' }]).then(() => 'answer');
    expect(await Promise.race([answered, new Promise((r) => setTimeout(() => r('timer'), 30))])).toBe('timer');
    expect(await answered).toBe('answer');
  });

  it('loads the fixture scripts shipped with the tests', () => {
    const script = loadLlmScript(path.join(__dirname, '../../fixtures/scripted-llm/repost-zip-codes.json'));
    expect(script.rules.length).toBeGreaterThan(3);
  });
});
