import * as fs from 'node:fs';
import * as path from 'node:path';
import { GROUND_TRUTH_PLACEMENT, isolatedPlacement, newImplementationName, renamedCopy, withNewImplementation } from '../../../activities/sandbox/new-implementation';
import { parseRecordsJsonl } from '../../../activities/sandbox/repost-records';
import { REPOST_SAMPLE } from '../../support/fixtures';

const SCRIPT = `import re

def slug(text):
    return re.sub(r"\\W+", "-", text)


# the tests
def test_slug():
    assert slug("a b") == slug_new_implementation("a b")

if __name__ == "__main__":
    test_slug()
`;

describe('withNewImplementation', () => {
  test('a function is copied, renamed, before the test function and its comment', () => {
    const out = withNewImplementation(SCRIPT, 'def slug(text):\n    """Doc."""\n    return re.sub(r"\\W+", "-", text)\n', 'slug');
    const copyAt = out.indexOf('def slug_new_implementation(text):');
    expect(copyAt).toBeGreaterThan(out.indexOf('def slug(text):'));
    expect(copyAt).toBeLessThan(out.indexOf('# the tests'));
    expect(out).toContain('    """Doc."""\n    return re.sub(r"\\W+", "-", text)\n');
    // Everything of the original script is still there, in order.
    expect(out.replace(/def slug_new_implementation[\s\S]*?\n\n\n/, '')).toBe(SCRIPT);
  });

  test('without a test block the copy goes to the end', () => {
    const out = withNewImplementation('def f():\n    return 1\n', 'def f():\n    return 2\n', 'f');
    expect(out).toBe('def f():\n    return 1\n\n\ndef f_new_implementation():\n    return 2\n');
  });

  test('a method is appended to its class, re-indented, decorators kept, annotations postponed', () => {
    const script = 'class Angle:\n    def __init__(self):\n        self.v = 0\n\n    @classmethod\n    def zero(cls) -> "Angle":\n        return cls()\n\ndef test_zero():\n    assert Angle.zero_new_implementation().v == 0\n';
    const out = withNewImplementation(script, '@classmethod\ndef zero(cls, scale: float = 1.0) -> Angle:\n    return cls()\n', 'Angle.zero');
    expect(out).toContain("        return cls()\n\n    @classmethod\n    def zero_new_implementation(cls, scale: 'float' = 1.0) -> 'Angle':\n        return cls()\n\n\ndef test_zero");
  });

  test('a class defined under with, if or try at module level is still found; one inside a function is not', () => {
    const script = [
      'from unittest.mock import patch',
      "with patch('os.getcwd', return_value='/x'):",
      '    if True:',
      '        class Pipe:',
      '            def recv(self):',
      '                return 1',
      '',
      '        def test_recv():',
      '            assert Pipe().recv() == Pipe().recv_new_implementation()',
      '',
      'def helper():',
      '    class Hidden:',
      '        def recv(self):',
      '            return 2',
      '',
    ].join('\n');
    const out = withNewImplementation(script, 'def recv(self):\n    return 1\n', 'Pipe.recv');
    expect(out).toContain('                return 1\n\n            def recv_new_implementation(self):\n                return 1\n\n\n        def test_recv');
    // A class local to a function is another scope: the copy is not put there, but at module level.
    const hidden = withNewImplementation(script, 'def recv(self):\n    return 2\n', 'Hidden.recv');
    expect(hidden).not.toMatch(/^ +def recv_new_implementation/m);
    expect(hidden).toMatch(/^def recv_new_implementation\(self\):\n    return 2$/m);
  });

  test('lines inside a multi-line string are not re-indented', () => {
    const out = withNewImplementation('class A:\n    pass\n', 'def sql(self):\n    return """SELECT *\nFROM t"""\n', 'A.sql');
    expect(out).toContain('    def sql_new_implementation(self):\n        return """SELECT *\nFROM t"""');
  });

  test('an indented original (as cut from its class) is dedented first', () => {
    expect(renamedCopy('    def m(self):\n        return 1\n', 'm', false)).toBe('def m_new_implementation(self):\n    return 1');
  });

  test('a source that defines another function is refused', () => {
    expect(() => withNewImplementation(SCRIPT, 'def other():\n    pass\n', 'slug')).toThrow(/named other/);
  });

  test('every fixture record gets exactly one new implementation where its tests expect it', () => {
    const records = parseRecordsJsonl(fs.readFileSync(REPOST_SAMPLE, 'utf8'));
    expect(records).toHaveLength(40);
    for (const r of records) {
      const out = withNewImplementation(r.eval_script, r.orig_func, r.func_name);
      const method = r.func_name.split('.').at(-1)!;
      expect(out.match(new RegExp(`def ${method}_new_implementation\\(`, 'g'))).toHaveLength(1);
      expect(newImplementationName(r.func_name)).toBe(`${r.func_name}_new_implementation`);
    }
  });
});

describe('placement by name (the target kind names it; the sandbox only looks it up)', () => {
  const CLASS_SCRIPT = `class Counter:
    def __init__(self):
        self.n = 0

    def add(self, k):
        self.n += k
        return self.n


def test_add():
    assert Counter().add(2) == Counter_new_implementation().add(2)


if __name__ == "__main__":
    test_add()
`;
  const CANDIDATE = 'class Counter:\n    def __init__(self):\n        self.n = 0\n\n    def add(self, k):\n        self.n = self.n + k\n        return self.n\n';

  test('the ground truth: a function beside its original, a class copied whole under its new name', () => {
    expect(GROUND_TRUTH_PLACEMENT.function(SCRIPT, 'def slug(text):\n    return text\n', 'slug')).toBe(withNewImplementation(SCRIPT, 'def slug(text):\n    return text\n', 'slug'));
    const cls = GROUND_TRUTH_PLACEMENT.class(CLASS_SCRIPT, CANDIDATE, 'Counter');
    expect(cls).toContain('class Counter_new_implementation:');
    expect(cls.indexOf('class Counter_new_implementation:')).toBeLessThan(cls.indexOf('def test_add'));
  });

  test("an isolated run's halves: a stub of the placement's shape, the candidate's definition in the module", () => {
    const fn = isolatedPlacement(SCRIPT, 'def slug(text):\n    return text.lower()\n', 'slug');
    expect(fn.kind).toBe('function');
    expect(fn.script).toMatch(/^def slug_new_implementation\(\*args, \*\*kwargs\):/m);
    expect(fn.module).toContain('return text.lower()');
    expect(fn.module).not.toContain('def test_slug');
    const cls = isolatedPlacement(CLASS_SCRIPT, CANDIDATE, 'Counter', 'class');
    expect(cls.kind).toBe('class');
    expect(cls.script).toMatch(/^class Counter_new_implementation\(.*stub_base\(\)\):/m);
    expect(cls.module).toContain('self.n = self.n + k');
    expect(cls.module).not.toContain('def test_add');
    expect(() => isolatedPlacement(SCRIPT, CANDIDATE, 'Counter', 'class')).toThrow(/defines no class Counter/);
  });
});
