import { EvalDatasetLineSchema, toEvalRecord, type EvalRecord } from '../../../activities/eval/dataset';
import { ANSWER_PATH, HarborExportError, answerSlot, harborTask, harborTaskName, tomlString } from '../../../activities/export/harbor';

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
    const hostile = record({ qualname: '../../etc/passwd; rm -rf / $(x) ' + 'A'.repeat(500), function_id: 'one' });
    const name = harborTaskName(hostile);
    expect(name).toMatch(/^t-[a-z0-9-]+$/);
    expect(name.length).toBeLessThanOrEqual(63);
    const a = harborTaskName(record({ qualname: 'f.g', function_id: 'a' }));
    const b = harborTaskName(record({ qualname: 'f_g', function_id: 'b' }));
    expect(a).not.toBe(b);
    expect(harborTaskName(record({ qualname: '___', function_id: 'c' }))).toMatch(/^t-[0-9a-f]{12}$/);
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
  const task = harborTask(record(), SANDBOX, '# verifier\n');

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
    const pinned = harborTask(record({ packages: [{ name: 'attrs', version: '23.2.0' }] }), SANDBOX, '');
    const dockerfile = pinned.files['environment/Dockerfile']!.text;
    expect(dockerfile).toContain('FROM repost-sandbox:abc');
    expect(dockerfile).toContain('attrs==23.2.0');
    expect(() => harborTask(record({ packages: [{ name: 'x; curl evil', version: '1' }] }), SANDBOX, '')).toThrow(HarborExportError);
  });

  it('writes the ground truth, dedented, with a heredoc terminator the code cannot hold', () => {
    const tricky = harborTask(record({ orig_func: 'def f(x):\n    s = """\nREPOST_GROUND_TRUTH\n"""\n    return s\n' }), SANDBOX, '');
    const solve = tricky.files['solution/solve.sh']!.text;
    const terminator = /<<'([A-Z_]+)'/.exec(solve)![1]!;
    expect(terminator).not.toBe('REPOST_GROUND_TRUTH');
    const body = solve.split('\n');
    expect(body.filter((l) => l === terminator)).toHaveLength(1);
    expect(tricky.files['solution/solve.sh']!.mode).toBe(0o755);
  });
});
