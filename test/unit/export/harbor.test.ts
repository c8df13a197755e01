import { EvalDatasetLineSchema, toEvalRecord, type EvalRecord } from '../../../activities/eval/dataset';
import { ANSWER_PATH, HarborExportError, answerSlot, classTarget, functionTarget, harborTask, harborTaskName, tomlString } from '../../../activities/export/harbor';
import { ClassDatasetRecordSchema, type ClassDatasetRecord } from '../../../activities/store/records';

const SANDBOX = { image: 'repost-sandbox:abc', memoryMb: 1536, cpus: 2, timeoutSec: 45 };

function record(overrides: Record<string, unknown> = {}): EvalRecord {
  return toEvalRecord(
    EvalDatasetLineSchema.parse({
      func_name: 'f',
      qualname: 'f',
      function_id: 'fid-1',
      idx: '1',
      repo_name: 'o/r',
      func_path: 'm.py',
      orig_func: 'def f(x):\n    """Doubles."""\n    return 2 * x\n',
      orig_context: '## m.py\ndef f(x):\n    """Doubles."""\n    return 2 * x\n',
      eval_script: 'def f(x):\n    return 2 * x\n\n\ndef test_f():\n    assert f(3) == f_new_implementation(3)\n\n\nif __name__ == "__main__":\n    test_f()\n',
      ...overrides,
    }),
  );
}

describe('Harbor task names', () => {
  it('are bounded, lower-case [a-z0-9-], and differ by record even when the names collide after cleaning', () => {
    const name = harborTaskName({ qualname: '../../etc/passwd; rm -rf / $(x) ' + 'A'.repeat(500), id: 'one' });
    expect(name).toMatch(/^t-[a-z0-9-]+$/);
    expect(name.length).toBeLessThanOrEqual(63);
    const a = harborTaskName({ qualname: 'f.g', id: 'a' });
    const b = harborTaskName({ qualname: 'f_g', id: 'b' });
    expect(a).not.toBe(b);
    expect(harborTaskName({ qualname: '___', id: 'c' })).toMatch(/^t-[0-9a-f]{12}$/);
    // A record's task is named from its target and its id.
    expect(harborTaskName(functionTarget(record({ qualname: 'f', function_id: 'a' }), 45))).toBe(harborTaskName({ qualname: 'f', id: 'a' }));
  });
});

describe('tomlString', () => {
  it('escapes quotes, backslashes and control characters so a value cannot end its string', () => {
    expect(tomlString('a"b\\c\nd\u0007')).toBe('"a\\"b\\\\c\\u000ad\\u0007"');
  });
});

describe('the answer slot', () => {
  it('marks where a function goes, before the tests, at the top level', () => {
    const slot = answerSlot(record());
    expect(slot.indent).toBe('');
    const lines = slot.script.split('\n');
    const at = lines.indexOf('#@@REPOST_ANSWER_SLOT@@');
    expect(at).toBeGreaterThan(0);
    expect(lines.findIndex((l) => l.startsWith('def test_f'))).toBeGreaterThan(at);
    expect(slot.script).not.toContain('f_new_implementation(*args');
  });

  it('marks a method inside its class, indented as the class body', () => {
    const slot = answerSlot(
      record({
        qualname: 'C.m',
        orig_func: '    def m(self):\n        return 1\n',
        eval_script: 'class C:\n    def m(self):\n        return 1\n\n\ndef test_m():\n    assert C().m() == C().m_new_implementation()\n',
      }),
    );
    expect(slot.indent).toBe('    ');
    const lines = slot.script.split('\n');
    const at = lines.indexOf('    #@@REPOST_ANSWER_SLOT@@');
    expect(at).toBeGreaterThan(lines.indexOf('class C:'));
    expect(at).toBeLessThan(lines.findIndex((l) => l.startsWith('def test_m')));
  });
});

describe('a Harbor task', () => {
  const task = harborTask(functionTarget(record(), SANDBOX.timeoutSec), SANDBOX, '# verifier\n');

  it("takes resources and timeouts from the run's sandbox settings and verifies in a separate container", () => {
    const toml = task.files['task.toml']!.text;
    expect(toml).toContain('schema_version = "1.4"');
    expect(toml).toContain('environment_mode = "separate"');
    expect(toml).toContain(`artifacts = ["${ANSWER_PATH}"]`);
    expect(toml).toContain('cpus = 2');
    expect(toml).toContain('memory_mb = 1536');
    expect(toml).toContain(`timeout_sec = ${45 + 120}`);
    expect(JSON.parse(task.files['tests/task.json']!.text)).toMatchObject({ name: 'f', qualname: 'f', kind: 'function', timeoutSec: 45, tests: ['test_f'] });
  });

  it('asks with the solve prompt and says where the answer goes', () => {
    const text = task.files['instruction.md']!.text;
    expect(text).toContain('Implement `f`');
    expect(text).toContain('...  # the body to implement');
    expect(text).not.toContain('return 2 * x');
    expect(text).toContain(ANSWER_PATH);
  });

  it('builds FROM the sandbox image with the pinned packages, and refuses a pin that is not name==version', () => {
    const pinned = harborTask(functionTarget(record({ packages: [{ name: 'attrs', version: '23.2.0' }] }), SANDBOX.timeoutSec), SANDBOX, '');
    const dockerfile = pinned.files['environment/Dockerfile']!.text;
    expect(dockerfile).toContain('FROM repost-sandbox:abc');
    expect(dockerfile).toContain('attrs==23.2.0');
    expect(() => harborTask(functionTarget(record({ packages: [{ name: 'x; curl evil', version: '1' }] }), SANDBOX.timeoutSec), SANDBOX, '')).toThrow(HarborExportError);
  });

  it('writes the ground truth, dedented, with a heredoc terminator the code cannot hold', () => {
    const tricky = harborTask(functionTarget(record({ orig_func: 'def f(x):\n    s = """\nREPOST_GROUND_TRUTH\n"""\n    return s\n' }), SANDBOX.timeoutSec), SANDBOX, '');
    const solve = tricky.files['solution/solve.sh']!.text;
    const terminator = /<<'([A-Z_]+)'/.exec(solve)![1]!;
    expect(terminator).not.toBe('REPOST_GROUND_TRUTH');
    const body = solve.split('\n');
    expect(body.filter((l) => l === terminator)).toHaveLength(1);
    expect(tricky.files['solution/solve.sh']!.mode).toBe(0o755);
  });
});

const TALLY = 'class Tally:\n    """Counts words."""\n\n    def __init__(self):\n        self.counts = {}\n\n    def add(self, word):\n        w = normalize(word)\n        self.counts[w] = self.counts.get(w, 0) + 1\n';

function classRecord(overrides: Record<string, unknown> = {}): ClassDatasetRecord {
  return ClassDatasetRecordSchema.parse({
    class_name: 'Tally', idx: 'k1', repo_name: 'o/textkit', class_path: 'textkit/tally.py', orig_class: TALLY,
    orig_context: `## textkit/clean.py\ndef normalize(w):\n    return w.lower()\n\n## textkit/tally.py\n${TALLY}`,
    eval_script: `def normalize(w):\n    return w.lower()\n\n\n${TALLY}\n\ndef test_add():\n    a, b = Tally(), Tally_new_implementation()\n    a.add('X'); b.add('X')\n    assert a.counts == b.counts\n\n\ndef test_empty():\n    assert Tally().counts == Tally_new_implementation().counts\n\n\nif __name__ == "__main__":\n    test_add()\n    test_empty()\n`,
    test_functions: ['test_add', 'test_empty'], coverage_rate: 1, coverage_report: '', method_coverage: [], sandbox_ast_check: true, sandbox_functionality_check: null,
    test_correctness_check: 'yes', commit_id: 'c', qualname: 'Tally', class_id: 'cid-1', run_id: 'r', split: 'train', coverage_threshold: 0.8, ast_check_required: false,
    license: null, standalone: true, packages: [{ name: 'attrs', version: '23.2.0' }], prompt_versions: {}, debug_rounds: 0, coverage_rounds: 0, llm_tokens: 1,
    methods: ['__init__', 'add'], class_skeleton: 'class Tally:\n    """Counts words."""\n\n    def add(self, word):\n        ...\n', documentation_level: 'partial', metrics: {}, method_metrics: [],
    ...overrides,
  });
}

describe('a Harbor task of a class environment', () => {
  const target = classTarget(classRecord(), 30);
  const task = harborTask(target, SANDBOX, '# verifier\n');
  const verifier = JSON.parse(task.files['tests/task.json']!.text) as Record<string, unknown> & { isolated: { script: string; module: string; kind: string; target: string } };

  it('asks with the class solve prompt: the skeleton and the context without the class, and where the answer goes', () => {
    const text = task.files['instruction.md']!.text;
    expect(text).toContain('Implement the class `Tally`');
    expect(text).toContain('def add(self, word):\n        ...');
    expect(text).toContain('## textkit/clean.py');
    expect(text).not.toContain('self.counts.get(w, 0) + 1');
    expect(text).toContain(ANSWER_PATH);
    expect(text).toContain('every test passes');
  });

  it("runs each test function on its own (the reward is all of them passing), with the run's limit enough for every test", () => {
    expect(verifier).toMatchObject({ name: 'Tally', kind: 'class', scoring: 'per-test', tests: ['test_add', 'test_empty'], timeoutSec: 30, runTimeoutSec: 30 * 5, localModules: ['textkit'] });
    expect(task.files['task.toml']!.text).toContain(`timeout_sec = ${30 * 5 + 120}`);
    expect(task.files['task.toml']!.text).toContain('kind = "class"');
    expect(task.files['task.toml']!.text).toContain('class_id = "cid-1"');
    expect(task.files['task.toml']!.text).toContain('split = "train"');
    // The isolated halves: the script holds the stub class, the candidate's module the slot where the class goes.
    expect(verifier.isolated).toMatchObject({ kind: 'class', target: 'Tally' });
    expect(verifier.isolated.script).toContain('class Tally_new_implementation(');
    expect(verifier.isolated.module).toContain('#@@REPOST_ANSWER_SLOT@@');
    expect(verifier.isolated.module).not.toContain('self.counts.get(w, 0) + 1');
    expect(verifier.isolated.module).not.toContain('def test_add');
  });

  it('writes the original class as the ground truth, and installs its pinned packages', () => {
    expect(task.files['solution/solve.sh']!.text).toContain(TALLY.trimEnd());
    expect(task.files['environment/Dockerfile']!.text).toContain('attrs==23.2.0');
    expect(task.name).toMatch(/^t-tally-[0-9a-f]{12}$/);
  });

  it('refuses what the verifier would have to call or show: test names that are not identifiers, a context without the class, no tests', () => {
    expect(() => classTarget(classRecord({ test_functions: ['test_a', 'os.system("x")'] }), 30)).toThrow(HarborExportError);
    expect(() => classTarget(classRecord({ test_functions: [] }), 30)).toThrow(/no test function/);
    expect(() => classTarget(classRecord({ orig_context: '## textkit/clean.py\ndef normalize(w):\n    return w\n', orig_class: TALLY + '\n# changed\n' }), 30)).toThrow(/would show the answer/);
    expect(() => classTarget(classRecord({ class_name: 'Tally; rm -rf /' }), 30)).toThrow(HarborExportError);
  });

  it('keeps hostile names and ids out of the task name and inside TOML strings', () => {
    const hostile = classTarget(classRecord({ class_id: 'x"\n[evil]', repo_name: 'a"b\n[environment]\ncpus = 99' }), 30);
    const toml = harborTask(hostile, SANDBOX, '').files['task.toml']!.text;
    expect(toml).not.toMatch(/^\[evil\]/m);
    expect(toml.match(/^cpus = /gm)).toHaveLength(2);
    expect(harborTask(hostile, SANDBOX, '').name).toMatch(/^t-tally-[0-9a-f]{12}$/);
  });
});
