import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  PROMPT_KINDS,
  loadPromptTemplate,
  readPromptMarker,
  renderPrompt,
  type PromptKind,
  type PromptVars,
} from '../../../activities/llm';
import { PROMPTS_DIR, parsePromptTemplate } from '../../../activities/llm/prompts';
import { REPOST_SAMPLE } from '../../support/fixtures';

/** One record of RepoST's published evaluation set, to render prompts with real code. */
const sample = JSON.parse(fs.readFileSync(REPOST_SAMPLE, 'utf8').split('\n')[0]!) as {
  func_name: string;
  func_path: string;
  orig_func: string;
  orig_context: string;
  eval_script: string;
};

const varsByKind: { [K in PromptKind]: PromptVars[K] } = {
  sandbox: { functionName: sample.func_name, filePath: sample.func_path, context: `## ${sample.func_path}\n${sample.orig_func}` },
  aggregate: { functionName: sample.func_name, filePath: sample.func_path, context: sample.orig_context },
  tests: { functionName: sample.func_name, script: sample.eval_script },
  debug: { functionName: sample.func_name, script: sample.eval_script, errorMessage: "NameError: name 'List' is not defined" },
  coverage: { functionName: sample.func_name, script: sample.eval_script, missingLines: '12: return []', missingBranches: '10->12', coverage: 0.5 },
  mutation: { functionName: sample.func_name, script: sample.eval_script, survivors: '## 1. comparison, line 3\n-    if a < b:\n+    if a <= b:', score: 0.25 },
  check_functionality: { originalFunction: sample.orig_func, sandboxedFunction: sample.eval_script },
  check_tests: { functionName: sample.func_name, script: sample.eval_script },
  docstring: { functionName: sample.func_name, code: sample.orig_func },
  solve: { functionName: sample.func_name, context: sample.orig_context },
  repair: { functionName: sample.func_name, context: sample.orig_context, candidate: sample.orig_func, errorMessage: 'AssertionError' },
  candidate_tests: { functionName: sample.func_name, context: sample.orig_context },
  test_inputs: { functionName: sample.func_name, script: sample.eval_script },
  class_sandbox: { functionName: sample.func_name, filePath: sample.func_path, context: sample.orig_context },
  class_tests: { functionName: sample.func_name, script: sample.eval_script },
  class_debug: { functionName: sample.func_name, script: sample.eval_script, errorMessage: 'AssertionError' },
  class_coverage: { functionName: sample.func_name, script: sample.eval_script, missingLines: '12', missingBranches: '10->12', methodCoverage: 'add 50%', coverage: 0.5 },
  class_check_functionality: { functionName: sample.func_name, originalFunction: sample.orig_func, sandboxedFunction: sample.eval_script },
  class_check_tests: { functionName: sample.func_name, script: sample.eval_script },
  class_solve: { functionName: sample.func_name, context: sample.orig_context, skeleton: 'class X:\n    pass' },
  class_repair: { functionName: sample.func_name, context: sample.orig_context, skeleton: 'class X:\n    pass', candidate: 'class X:\n    pass', errorMessage: 'test_x: AssertionError' },
  check_assertion: { functionName: sample.func_name, context: sample.orig_context, testSource: sample.eval_script, assertion: 'assert f(None) == f_new_implementation(None)', failures: '- TypeError: boom' },
};

describe('prompt templates', () => {
  it('has a template file for every kind, each declaring exactly the variables it uses', () => {
    const files = fs.readdirSync(PROMPTS_DIR).filter((f) => f.endsWith('.md')).map((f) => path.basename(f, '.md')).sort();
    expect(files).toEqual([...PROMPT_KINDS].sort());
    for (const kind of PROMPT_KINDS) {
      const t = loadPromptTemplate(kind);
      expect(t.id).toBe(kind);
      expect(t.version).toMatch(/^\d+$/);
    }
  });

  it('rejects a template that uses an undeclared variable', () => {
    const bad = '---\nid: x\nversion: 1\nstep: solve\nanswer: code\nvariables: [a]\n---\n@@ system\n{{a}}\n@@ user\n{{b}}\n';
    expect(() => parsePromptTemplate(bad, 'bad.md')).toThrow(/used but not declared: \[b\]/);
  });

  it.each(PROMPT_KINDS.map((k) => [k]))('renders %s with every variable filled and a recognisable marker', (kind) => {
    const rendered = renderPrompt(kind, varsByKind[kind] as never);
    expect(rendered.promptId).toBe(kind);
    expect(rendered.promptVersion).toBe(loadPromptTemplate(kind).version);
    expect(rendered.messages.map((m) => m.role)).toEqual(['system', 'user']);
    const all = rendered.messages.map((m) => m.content).join('\n');
    expect(all).not.toMatch(/\{\{\w+\}\}/);
    expect(readPromptMarker(rendered.messages[1]!.content)).toEqual({ kind, version: rendered.promptVersion, functionName: sample.func_name });
    // The marker is the user message's last line; the system message carries none.
    expect(rendered.messages[1]!.content.trimEnd().split('\n').pop()).toMatch(/^\[prompt:/);
    expect(rendered.messages[0]!.content).not.toMatch(/\[prompt:/);
    expect(rendered.messages[1]!.content).toContain(`Function: ${sample.func_name}`);
  });

  it('uses RepoST naming for the copy under test and the test function, and the sandbox cache dir', () => {
    const tests = renderPrompt('tests', varsByKind.tests).messages.map((m) => m.content).join('\n');
    expect(tests).toContain('extract_all_zip_codes_new_implementation');
    expect(tests).toContain('test_extract_all_zip_codes()');
    expect(tests).toContain('if __name__ == "__main__":');
    expect(tests).toContain('/home/user/tmp');
    const custom = renderPrompt('sandbox', { ...varsByKind.sandbox, cacheDir: '/scratch/cache' }).messages[0]!.content;
    expect(custom).toContain('/scratch/cache');
  });

  it('carries each step its specific inputs', () => {
    expect(renderPrompt('debug', varsByKind.debug).messages[1]!.content).toContain("NameError: name 'List' is not defined");
    const cov = renderPrompt('coverage', varsByKind.coverage).messages[1]!.content;
    expect(cov).toContain('50%');
    expect(cov).toContain('10->12');
    expect(cov).toContain('12: return []');
    const mut = renderPrompt('mutation', varsByKind.mutation).messages[1]!.content;
    expect(mut).toContain('25%');
    expect(mut).toContain('+    if a <= b:');
    expect(renderPrompt('check_functionality', varsByKind.check_functionality).messages[1]!.content).toContain(sample.orig_func);
  });

  it('the mutation round never asks to compare what the tests prompt forbids: a change to printed, logged or message text is left', () => {
    const text = renderPrompt('mutation', varsByKind.mutation).messages[1]!.content;
    expect(text).toContain('Never compare the text of exception messages, log records, warnings or printed output, and never capture them to compare');
    expect(text).toContain('a change that only alters such text is one the tests must leave');
  });

  it('names the class copy and its tests in the class prompts, and carries the per-method coverage', () => {
    const tests = renderPrompt('class_tests', { functionName: 'Tally', script: 'class Tally:\n    pass\n' }).messages[1]!.content;
    expect(tests).toContain('`Tally_new_implementation`');
    expect(tests).toContain('test_Tally_empty');
    expect(tests).toContain('if __name__ == "__main__":');
    // The class sanity check looks for both constructors called by name in the test functions' own bodies.
    expect(tests).toContain('calling both constructors by name in its own body (`Tally(...)` and `Tally_new_implementation(...)`, not only through a helper');
    const cov = renderPrompt('class_coverage', { functionName: 'Tally', script: 's', missingLines: '14, 15', missingBranches: '13->exit', methodCoverage: '- add: 50%\n- remove: 100%', coverage: 0.75 }).messages[1]!.content;
    expect(cov).toContain('75%');
    expect(cov).toContain('- add: 50%');
    expect(cov).toContain('13->exit');
    const solve = renderPrompt('class_solve', { functionName: 'Tally', context: '## a.py\nX = 1\n', skeleton: 'class Tally:\n    def add(self, text):\n        pass' }).messages[1]!.content;
    expect(solve).toContain('def add(self, text):');
    expect(solve).toContain('X = 1');
  });

  it('inserts values literally, even when they contain template syntax', () => {
    const script = 'x = "{{functionName}}"\n';
    const user = renderPrompt('tests', { functionName: 'f', script }).messages[1]!.content;
    expect(user).toContain('x = "{{functionName}}"');
  });
});

describe('prompts laid out for prompt caches', () => {
  /** A request as an endpoint's prefix cache sees it: the messages in order. */
  const requestText = (p: ReturnType<typeof renderPrompt>) => p.messages.map((m) => `${m.role}\n${m.content}`).join('\n');
  const commonPrefix = (a: string, b: string) => {
    let i = 0;
    while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i += 1;
    return i;
  };
  const CRAWL_KINDS = PROMPT_KINDS.filter((k) => loadPromptTemplate(k).shared === 'crawl');

  it('gives every crawl step, function and class, the same system message with the rules, whatever the function', () => {
    expect(CRAWL_KINDS.length).toBe(14);
    const systems = new Set(CRAWL_KINDS.map((k) => renderPrompt(k, varsByKind[k] as never).messages[0]!.content));
    systems.add(renderPrompt('tests', { functionName: 'other_function', script: 'def other_function():\n    return 1\n' }).messages[0]!.content);
    expect(systems.size).toBe(1);
    const [system] = [...systems];
    expect(system!.length).toBeGreaterThan(3000);
    expect(system).toContain('/home/user/tmp');
    expect(system).not.toContain(sample.func_name);
  });

  it("shares the rules and the script as a prefix between one function's steps: the step's instructions come after", () => {
    const script = sample.eval_script;
    const withTests = `${script}\n\ndef test_${sample.func_name}():\n    assert ${sample.func_name}('') == ${sample.func_name}_new_implementation('')\n`;
    const name = sample.func_name;
    const steps = [
      renderPrompt('sandbox', varsByKind.sandbox),
      renderPrompt('tests', { functionName: name, script }),
      renderPrompt('debug', { functionName: name, script: withTests, errorMessage: 'NameError' }),
      renderPrompt('coverage', { functionName: name, script: withTests, missingLines: '3', missingBranches: '2->4', coverage: 0.5 }),
      renderPrompt('mutation', { functionName: name, script: withTests, survivors: '-a\n+b', score: 0.5 }),
      renderPrompt('check_tests', { functionName: name, script: withTests }),
      renderPrompt('check_functionality', { originalFunction: sample.orig_func, sandboxedFunction: sample.orig_func }),
    ].map(requestText);
    const system = renderPrompt('tests', { functionName: name, script }).messages[0]!.content;
    // Any two steps of the function share at least the rules and the function's name.
    for (let i = 1; i < steps.length; i += 1) {
      const best = Math.max(...steps.slice(0, i).map((before) => commonPrefix(before, steps[i]!)));
      expect(best).toBeGreaterThanOrEqual(system.length + `Function: ${name}`.length);
    }
    // A step on the script with tests shares the whole script the tests step was given, and the
    // later steps on the same script share it whole too.
    expect(commonPrefix(steps[1]!, steps[2]!)).toBeGreaterThanOrEqual(system.length + script.length);
    for (const later of steps.slice(3, 6)) expect(commonPrefix(steps[2]!, later)).toBeGreaterThanOrEqual(system.length + withTests.length);
  });
});

describe('every prompt states the rules its checks apply', () => {
  /** Each sanity check of an answer (sanity.ts), and the words of the shared rules that state it. */
  const RULE_OF_CHECK: Record<string, string> = {
    parses: 'A script in an answer is complete',
    target_exists: 'The original function or class stays as it is written: same name',
    target_not_shrunk: 'same name, signature and body (for a class: its bases, class attributes and every method)',
    script_keeps_context: 'the script keeps the code it was given rather than dropping it',
    script_not_shrunk: 'the script keeps the code it was given rather than dropping it',
    test_function_exists: "A function's test function `test_<name>()`",
    test_calls_target: 'calls `<name>(...)` and `<name>_new_implementation(...)` by name in its own body',
    test_calls_new_implementation: 'not only inside a helper or through a loop over the two',
    test_has_assertions: 'at least three `assert` statements',
    main_block_exists: 'The script ends with an `if __name__ == "__main__":` block',
    main_calls_test: 'calls every test function directly',
    main_call_not_in_try: 'without try/except around the calls',
    tests_read_implementation: "never read the implementations' code, bytecode or source text",
  };

  it('names a rule for every check the sanity checks apply', () => {
    const source = fs.readFileSync(path.join(__dirname, '../../../activities/llm/sanity.ts'), 'utf8');
    const checks = [...new Set([...source.matchAll(/check: '([a-z_]+)'/g)].map((m) => m[1]!))].sort();
    expect(checks).toEqual(Object.keys(RULE_OF_CHECK).sort());
  });

  it.each(PROMPT_KINDS.filter((k) => loadPromptTemplate(k).shared === 'crawl').map((k) => [k]))('%s carries every rule, the class constructor rule included', (kind) => {
    const system = renderPrompt(kind, varsByKind[kind] as never).messages[0]!.content;
    for (const phrase of Object.values(RULE_OF_CHECK)) expect(system).toContain(phrase);
    expect(system).toContain('calling both constructors by name in their own body (not only through a helper, a factory or a loop over the classes)');
    expect(system).toContain('They never compare, nor capture to compare, the text of exception messages, log records, warnings, printed output');
  });
});
