/**
 * The RepoST prompt set, as versioned template files under `prompts/` with typed variables.
 *
 * A template file has a front matter (`id`, `version`, `step`, `answer`, `variables`, and
 * optionally `shared`) and either two sections introduced by `@@ system` and `@@ user` lines, or,
 * with `shared: <name>`, only a `@@ user` section: its system message is then the shared text
 * `prompts/shared/<name>.md`, the same for every step that names it. `{{name}}` marks a variable.
 * The variables each kind receives are the `PromptVars` types below; a few are derived here
 * (the test function and new-implementation names, the sandbox cache directory, the coverage
 * percentage) so callers cannot spell them differently from step to step.
 *
 * Prompts are laid out for an endpoint's prompt cache, which serves the longest prefix a request
 * shares with an earlier one: what stays the same comes first. The shared system message (who
 * answers and the rules every check applies) is byte-identical across the steps that share it
 * and across functions; the user message starts with the function's name and the code it
 * concerns (the script, which the next step's prompt starts with too), and the step's own
 * instructions and changing inputs come after it.
 *
 * Every rendered user message ends with a marker line
 *     [prompt:<id> v<version> function:<functionName>]
 * which makes the prompt kind and the function recognisable from the request alone (the
 * scripted LLM server matches its rules on it; recorded exchanges can be grouped by it). It is
 * last so that it does not end the shared prefix early.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { LLM_STEPS, type ChatMessage, type LlmStep } from './types';

/** Directory the sandbox gives generated scripts for files they read or write. */
export const DEFAULT_SANDBOX_CACHE_DIR = '/home/user/tmp';

/** Every LLM step has its prompt template, named like the step. */
export type PromptKind = LlmStep;
export const PROMPT_KINDS: readonly PromptKind[] = LLM_STEPS;

interface WithCacheDir {
  /** Defaults to DEFAULT_SANDBOX_CACHE_DIR. */
  cacheDir?: string;
}

export interface PromptVars {
  /** Target file only; `context` is the file's code under a `## <path>` header. */
  sandbox: { functionName: string; filePath: string; context: string } & WithCacheDir;
  /** Target file plus local dependencies from other files, each under a `## <path>` header. */
  aggregate: { functionName: string; filePath: string; context: string } & WithCacheDir;
  tests: { functionName: string; script: string } & WithCacheDir;
  debug: { functionName: string; script: string; errorMessage: string } & WithCacheDir;
  /** `coverage` is the branch coverage reached so far, 0..1. */
  coverage: { functionName: string; script: string; missingLines: string; missingBranches: string; coverage: number } & WithCacheDir;
  /** `survivors`: the surviving mutants' diffs; `score`: the share of mutants the tests kill so far, 0..1. */
  mutation: { functionName: string; script: string; survivors: string; score: number } & WithCacheDir;
  /** `functionName` defaults to the name defined by `originalFunction`. */
  check_functionality: { originalFunction: string; sandboxedFunction: string; functionName?: string };
  check_tests: { functionName: string; script: string };
  docstring: { functionName: string; code: string };
  /** `context`: the module with the target's body removed (signature and description kept). */
  solve: { functionName: string; context: string };
  /** `candidate`: the failing implementation; `errorMessage`: what the evaluation reported. */
  repair: { functionName: string; context: string; candidate: string; errorMessage: string };
  /** Tests for dual ranking, written from the same context as `solve` (never the ground truth). */
  candidate_tests: { functionName: string; context: string };
  /** `script`: the evaluation script without its tests; inputs whose outputs the ground truth decides. */
  test_inputs: { functionName: string; script: string };
  // A whole class: `functionName` is the class's name; its copy is `<Class>_new_implementation`.
  class_sandbox: { functionName: string; filePath: string; context: string } & WithCacheDir;
  class_tests: { functionName: string; script: string } & WithCacheDir;
  class_debug: { functionName: string; script: string; errorMessage: string } & WithCacheDir;
  /** `methodCoverage`: one line per method (its name and coverage); `coverage`: over all methods, 0..1. */
  class_coverage: { functionName: string; script: string; missingLines: string; missingBranches: string; methodCoverage: string; coverage: number } & WithCacheDir;
  class_check_functionality: { functionName: string; originalFunction: string; sandboxedFunction: string };
  class_check_tests: { functionName: string; script: string };
  /** `context`: what the class uses from its repository (the class left out); `skeleton`: its signatures and docstrings. */
  class_solve: { functionName: string; context: string; skeleton: string };
  /** `candidate`: the class that failed; `errorMessage`: which test functions failed and what they raised. */
  class_repair: { functionName: string; context: string; skeleton: string; candidate: string; errorMessage: string };
  /**
   * `context`: what the solve prompt showed; `testSource`: the test function holding the
   * `assertion`; `failures`: what the failing implementations ran into, one a line.
   */
  check_assertion: { functionName: string; context: string; testSource: string; assertion: string; failures: string };
}

export interface RenderedPrompt {
  messages: ChatMessage[];
  promptId: string;
  promptVersion: string;
  /** The pipeline step the prompt belongs to (selects the model). */
  step: LlmStep;
}

const FrontMatterSchema = z.object({
  id: z.string().min(1),
  version: z.string().regex(/^\d+$/),
  step: z.enum(LLM_STEPS),
  answer: z.string().min(1),
  variables: z.array(z.string().regex(/^[A-Za-z]\w*$/)),
  shared: z.string().regex(/^[a-z_]+$/).optional(),
});

const SharedFrontMatterSchema = z.object({
  id: z.string().regex(/^[a-z_]+$/),
  version: z.string().regex(/^\d+$/),
  variables: z.array(z.string().regex(/^[A-Za-z]\w*$/)),
});

export interface PromptTemplate {
  id: string;
  version: string;
  step: LlmStep;
  /** What the answer holds (code, code+bash, verdict(...), text); documentation for readers. */
  answer: string;
  variables: string[];
  /** The shared system text this template uses instead of a `@@ system` section of its own. */
  shared?: string;
  system: string;
  user: string;
}

/** A system text several templates share (`prompts/shared/<id>.md`): a front matter, then the text. */
export interface SharedPromptText {
  id: string;
  version: string;
  variables: string[];
  text: string;
}

export const PROMPTS_DIR = path.join(__dirname, 'prompts');
export const SHARED_PROMPTS_DIR = path.join(PROMPTS_DIR, 'shared');

function readFrontMatter(text: string, source: string): { meta: Record<string, unknown>; body: string } {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text.replace(/\r\n/g, '\n'));
  if (!m) throw new Error(`${source}: missing front matter`);
  const meta: Record<string, unknown> = {};
  for (const line of m[1]!.split('\n')) {
    const kv = /^(\w+):\s*(.*)$/.exec(line.trim());
    if (!kv) continue;
    const value = kv[2]!.trim();
    meta[kv[1]!] = value.startsWith('[')
      ? value
          .slice(1, -1)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : value;
  }
  return { meta, body: m[2]! };
}

function checkVariables(source: string, text: string, declaredList: string[]): void {
  const used = new Set([...text.matchAll(/\{\{(\w+)\}\}/g)].map((x) => x[1]!));
  const declared = new Set(declaredList);
  const undeclared = [...used].filter((v) => !declared.has(v));
  const unused = [...declared].filter((v) => !used.has(v));
  if (undeclared.length || unused.length) {
    throw new Error(`${source}: variables used but not declared: [${undeclared.join(', ')}], declared but not used: [${unused.join(', ')}]`);
  }
}

/** Parses a shared system text; throws with the file name when it is malformed. */
export function parseSharedPromptText(text: string, source: string): SharedPromptText {
  const { meta, body } = readFrontMatter(text, source);
  const front = SharedFrontMatterSchema.safeParse(meta);
  if (!front.success) throw new Error(`${source}: bad front matter: ${front.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const shared: SharedPromptText = { ...front.data, text: body.trim() };
  checkVariables(source, shared.text, shared.variables);
  return shared;
}

const sharedTexts = new Map<string, SharedPromptText>();

export function loadSharedPromptText(id: string): SharedPromptText {
  let t = sharedTexts.get(id);
  if (!t) {
    if (!/^[a-z_]+$/.test(id)) throw new Error(`shared prompt text ${JSON.stringify(id)}: not a name`);
    const file = path.join(SHARED_PROMPTS_DIR, `${id}.md`);
    t = parseSharedPromptText(fs.readFileSync(file, 'utf8'), file);
    if (t.id !== id) throw new Error(`${file}: id ${t.id} does not match the file name`);
    sharedTexts.set(id, t);
  }
  return t;
}

/** Parses a template file; throws with the file name when it is malformed (a programming error). */
export function parsePromptTemplate(text: string, source: string): PromptTemplate {
  const { meta, body } = readFrontMatter(text, source);
  const front = FrontMatterSchema.safeParse(meta);
  if (!front.success) throw new Error(`${source}: bad front matter: ${front.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  let template: PromptTemplate;
  if (front.data.shared !== undefined) {
    const sections = /^@@ user\n([\s\S]*)$/.exec(body);
    if (!sections) throw new Error(`${source}: a template with a shared system text has only an "@@ user" section`);
    template = { ...front.data, system: '', user: sections[1]!.trim() };
  } else {
    const sections = /^@@ system\n([\s\S]*?)\n@@ user\n([\s\S]*)$/.exec(body);
    if (!sections) throw new Error(`${source}: expected an "@@ system" section followed by an "@@ user" section`);
    template = { ...front.data, system: sections[1]!.trim(), user: sections[2]!.trim() };
  }
  checkVariables(source, `${template.system}\n${template.user}`, template.variables);
  return template;
}

const templates = new Map<PromptKind, PromptTemplate>();

export function loadPromptTemplate(kind: PromptKind): PromptTemplate {
  let t = templates.get(kind);
  if (!t) {
    const file = path.join(PROMPTS_DIR, `${kind}.md`);
    t = parsePromptTemplate(fs.readFileSync(file, 'utf8'), file);
    if (t.id !== kind) throw new Error(`${file}: id ${t.id} does not match the file name`);
    templates.set(kind, t);
  }
  return t;
}

/** Replaces `{{name}}` in one pass, so values that themselves contain `{{...}}` stay literal. */
export function fillTemplate(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`prompt variable ${name} has no value`);
    return v;
  });
}

/** The name of the function an original-function snippet defines (first `def`). */
export function definedFunctionName(code: string): string | undefined {
  return /^[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)/m.exec(code)?.[1];
}

/** RepoST's naming: the copy under test is `<name>_new_implementation`, the test `test_<name>`. */
export function newImplementationName(functionName: string): string {
  return `${functionName}_new_implementation`;
}

export function testFunctionName(functionName: string): string {
  const simple = functionName.split('.').pop()!;
  return `test_${simple}`;
}

export function promptMarker(id: string, version: string, functionName: string): string {
  return `[prompt:${id} v${version} function:${functionName}]`;
}

/** Reads the kind, version and function name back from a rendered prompt's last marker line. */
export function readPromptMarker(text: string): { kind: string; version: string; functionName: string | undefined } | undefined {
  const all = [...text.matchAll(/^\[prompt:([a-z_]+) v(\d+)(?: function:([^\]\s]+))?\]$/gm)];
  const m = all[all.length - 1];
  return m ? { kind: m[1]!, version: m[2]!, functionName: m[3] } : undefined;
}

function percent(fraction: number): string {
  return `${Math.round(Math.max(0, Math.min(1, fraction)) * 1000) / 10}%`;
}

function valuesFor<K extends PromptKind>(kind: K, vars: PromptVars[K]): { functionName: string; values: Record<string, string> } {
  const v = vars as Record<string, unknown>;
  const functionName =
    (typeof v.functionName === 'string' && v.functionName) ||
    (kind === 'check_functionality' ? definedFunctionName(String(v.originalFunction ?? '')) : undefined);
  if (!functionName) throw new Error(`prompt ${kind}: functionName is required`);
  const values: Record<string, string> = {
    functionName,
    testFunction: testFunctionName(functionName),
    newImplementation: newImplementationName(functionName),
    cacheDir: typeof v.cacheDir === 'string' && v.cacheDir ? v.cacheDir : DEFAULT_SANDBOX_CACHE_DIR,
  };
  for (const [key, value] of Object.entries(v)) {
    if (typeof value === 'string') values[key] = value;
  }
  if (kind === 'coverage' || kind === 'class_coverage') values.coveragePercent = percent(Number(v.coverage));
  if (kind === 'mutation') values.scorePercent = percent(Number(v.score));
  return { functionName, values };
}

export function renderPrompt<K extends PromptKind>(kind: K, vars: PromptVars[K]): RenderedPrompt {
  const t = loadPromptTemplate(kind);
  const { functionName, values } = valuesFor(kind, vars);
  const system = t.shared !== undefined ? fillTemplate(loadSharedPromptText(t.shared).text, values) : fillTemplate(t.system, values);
  const user = `${fillTemplate(t.user, values)}\n\n${promptMarker(t.id, t.version, functionName)}`;
  return {
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    promptId: t.id,
    promptVersion: t.version,
    step: t.step,
  };
}

/** Version of the follow-up turn below; recorded with the step's prompt version when used. */
export const FOLLOW_UP_VERSION = '1';

/** What was wrong with an unusable answer, in words the model can act on. */
export function describeUnusableAnswer(failure: string, detail: string): string {
  switch (failure) {
    case 'parse_empty':
      return 'it was empty.';
    case 'parse_no_code_block':
      return 'it has no fenced ```python code block holding the complete script.';
    case 'parse_truncated':
      return `it was cut off before the end (${detail}). Answer with less explanation so the whole script fits.`;
    case 'parse_abbreviated':
      return `it leaves parts of the code out (${detail}). Every line must be written out.`;
    case 'sanity_check':
      return `it failed these checks: ${detail}.`;
    default:
      return `${failure}: ${detail}`;
  }
}

/**
 * The follow-up turn after an unusable answer: the conversation goes on with the model's own
 * answer and what was wrong with it, so a retry is a different request (at temperature 0 the
 * identical request would get the identical answer) that tells the model what to fix.
 */
export function followUpMessages(rendered: RenderedPrompt, previousAnswer: string, failure: string, detail: string): ChatMessage[] {
  return [
    ...rendered.messages,
    { role: 'assistant', content: previousAnswer },
    {
      role: 'user',
      content: `Your answer above cannot be used: ${describeUnusableAnswer(failure, detail)}\nAnswer the original request again, in the shape it asks for, fixing this.`,
    },
  ];
}
