/**
 * `eval.ts --classes`: class-level evaluation over a `classes-dataset.jsonl`. For each class the
 * model gets the skeleton and what the class uses from its repository (the `class_solve` prompt),
 * n times; each answer's class runs in the sandbox as `<Class>_new_implementation` inside the
 * environment's script, one run per answer, each test function on its own (the harness's test
 * runner), and is compared with the original class by BLEU, ROUGE-L and TSED
 * (activities/eval/class-eval.ts). `--ground-truth` answers with each record's own class instead
 * of asking a model (a check of the environments: every test passes, similarity 1).
 *
 * Writes `class-eval.jsonl` (a line per class: every sample's per-test results and similarity)
 * and `class-eval-summary.json` (Pass@k over whole classes, per-test pass rate and similarity,
 * overall, per documentation level and per metric quartile) into the output folder.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  classCandidateScript,
  classEvalHeader,
  classSimilarity,
  contextModules,
  contextWithoutClass,
  extractClassCandidate,
  scoreClassSample,
  summarizeClassEval,
  testSnippet,
  unrunnableSample,
  type ClassEvalResult,
  type ClassEvalSummary,
  type ClassSampleResult,
} from '../../activities/eval/class-eval';
import { runnerRequest, snippetResults } from '../../activities/eval/test-runner';
import { createOpenAiClient } from '../../activities/llm/http-agent';
import { renderPrompt } from '../../activities/llm/prompts';
import { runLimitsOf, SandboxExecutor } from '../../activities/sandbox';
import { ensureSandboxImage } from '../../sandbox-image/build';
import { ClassDatasetRecordSchema, type ClassDatasetRecord } from '../../activities/store/records';
import { writeFileAtomic } from '../../activities/store/artifacts';
import { dataPaths, loadConfig, type Config } from '../../temporal.config';
import { CommandFailure } from './cli';
import { loadLlmScript, startScriptedLlmServer } from '../scripted-llm/server';

export interface ClassEvalFlags {
  dataset: string;
  out: string;
  groundTruth: boolean;
  model?: string;
  baseUrl?: string;
  scripted?: string;
  n: number;
  temperature: number;
  ks: number[];
  limit?: number;
  timeoutSec: number;
}

/** The records of a `classes-dataset.jsonl`; a bad line is an error naming it. */
export function readClassDataset(file: string): ClassDatasetRecord[] {
  if (!fs.existsSync(file)) throw new CommandFailure(`no dataset ${file}`);
  const out: ClassDatasetRecord[] = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (!line.trim()) return;
      let json: unknown;
      try {
        json = JSON.parse(line);
      } catch (err) {
        throw new CommandFailure(`${file} line ${i + 1}: not JSON (${(err as Error).message})`);
      }
      const parsed = ClassDatasetRecordSchema.safeParse(json);
      if (!parsed.success) throw new CommandFailure(`${file} line ${i + 1}: not a class environment record: ${parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ')}`);
      out.push(parsed.data);
    });
  return out;
}

/** Where the answers come from: the records' own classes, or a model. */
type Answerer = (record: ClassDatasetRecord, sample: number) => Promise<string>;

function modelAnswerer(config: Config, model: string, temperature: number): Answerer {
  const client = createOpenAiClient({ baseUrl: config.llm.baseUrl, apiKey: config.llm.apiKey, timeoutSec: config.llm.timeoutSec });
  return async (record) => {
    const context = contextWithoutClass(record.orig_context, record.orig_class);
    if (context === null) throw new Error(`the context of ${record.class_name} does not hold the class as written: the model would see the answer`);
    const prompt = renderPrompt('class_solve', { functionName: record.class_name, context, skeleton: record.class_skeleton });
    const reply = await client.chat.completions.create({ model, temperature, messages: prompt.messages.map((m) => ({ role: m.role, content: m.content })) as never });
    return reply.choices[0]?.message?.content ?? '';
  };
}

async function scoreAnswer(executor: SandboxExecutor, config: Config, record: ClassDatasetRecord, sample: number, answer: string, timeoutSec: number): Promise<ClassSampleResult> {
  const candidate = extractClassCandidate(answer, record.class_name, contextModules(record.orig_context));
  if (!candidate.ok) return unrunnableSample(sample, record.test_functions, candidate.detail);
  const similarity = classSimilarity(candidate.code, record.orig_class);
  let placed: ReturnType<typeof classCandidateScript>;
  try {
    placed = classCandidateScript(record.eval_script, candidate, record.class_name);
  } catch (err) {
    return unrunnableSample(sample, record.test_functions, `the class could not be placed in the script: ${(err as Error).message}`, similarity);
  }
  // Each test function on its own (the runner loads the script as a module: its __main__ block does not run).
  const request = runnerRequest({
    mode: 'outputs',
    script: placed.script,
    candidate: placed.candidate,
    target: record.class_name,
    snippets: record.test_functions.map(testSnippet),
    snippetTimeoutSec: timeoutSec,
    requirements: record.packages.map((p) => `${p.name}==${p.version}`),
  });
  const result = await executor.run({ ...request, limits: runLimitsOf(config.sandbox) });
  if (result.status === 'infrastructure') throw new Error(`the sandbox failed for ${record.class_name}: ${result.stderr.slice(0, 500)}`);
  const tests = snippetResults(result, record.test_functions.length).map((r, i) => ({
    test: record.test_functions[i]!,
    passed: r.status === 'value' || r.status === 'pass',
    failure: r.status === 'fail' ? r.type : r.status === 'missing' ? 'missing' : null,
  }));
  return scoreClassSample(sample, tests, similarity);
}

export async function runClassEval(flags: ClassEvalFlags, log: (line: string) => void = console.log): Promise<{ results: ClassEvalResult[]; summary: ClassEvalSummary; outDir: string }> {
  const records = readClassDataset(flags.dataset).slice(0, flags.limit ?? Infinity);
  if (records.length === 0) throw new CommandFailure(`${flags.dataset} holds no class environment`);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    let config = loadConfig(flags.baseUrl ? { overrides: { llm: { baseUrl: flags.baseUrl } } } : {});
    let answer: Answerer;
    if (flags.groundTruth) {
      answer = async (r) => `\`\`\`python\n${r.orig_class}\n\`\`\`\n`;
    } else {
      if (flags.scripted) {
        const server = await startScriptedLlmServer(loadLlmScript(flags.scripted));
        cleanups.push(() => server.close());
        config = loadConfig({ overrides: { llm: { baseUrl: server.url, apiKey: 'scripted', model: 'scripted' } } });
        log(`scripted LLM server (${flags.scripted}) at ${server.url}`);
      }
      answer = modelAnswerer(config, flags.model ?? config.llm.models.solve ?? config.llm.model, flags.temperature);
    }
    const image = config.sandbox.image ?? (await ensureSandboxImage({ log })).tag;
    const executor = new SandboxExecutor(config.sandbox, { image, packagesDir: dataPaths(config).packages });
    cleanups.push(() => executor.close());
    const n = flags.groundTruth ? 1 : flags.n;
    const results: ClassEvalResult[] = [];
    for (const record of records) {
      const samples: ClassSampleResult[] = [];
      for (let s = 0; s < n; s++) samples.push(await scoreAnswer(executor, config, record, s, await answer(record, s), flags.timeoutSec));
      results.push({ ...classEvalHeader(record), samples });
      const best = samples.reduce((a, b) => (b.passRate > a.passRate ? b : a));
      log(`${record.repo_name} ${record.class_path}::${record.class_name}: ${samples.filter((x) => x.passed).length}/${n} sample(s) pass every test; best ${best.passedTests}/${best.tests.length} tests`);
    }
    const summary = summarizeClassEval(results, flags.ks);
    fs.mkdirSync(flags.out, { recursive: true });
    await writeFileAtomic(path.join(flags.out, 'class-eval.jsonl'), results.map((r) => JSON.stringify(r)).join('\n') + '\n');
    await writeFileAtomic(path.join(flags.out, 'class-eval-summary.json'), JSON.stringify(summary, null, 2) + '\n');
    return { results, summary, outDir: flags.out };
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
}
