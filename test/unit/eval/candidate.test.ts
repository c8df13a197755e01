import { definesAtLineStart, extractCandidate } from '../../../activities/eval/candidate';
import { candidateScript, insertPreamble } from '../../../activities/eval/candidate-script';

const CLAMP = 'def clamp(x, lo=0, hi=10):\n    """Limit x to [lo, hi]."""\n    return max(lo, min(x, hi))\n';
const target = { qualname: 'clamp', origFunc: CLAMP };

const ok = (c: ReturnType<typeof extractCandidate>) => {
  if (!c.ok) throw new Error(`expected a candidate, got: ${c.detail}`);
  return c;
};

describe('taking a candidate from an answer', () => {
  it('takes the last code block', () => {
    const answer = 'First try:\n```python\ndef clamp(x, lo=0, hi=10):\n    return x\n```\nBetter:\n```python\ndef clamp(x, lo=0, hi=10):\n    return min(max(x, lo), hi)\n```\n';
    expect(ok(extractCandidate(answer, target)).code).toBe('def clamp(x, lo=0, hi=10):\n    return min(max(x, lo), hi)');
  });

  it('accepts a bare body, indented under the ground truth signature', () => {
    const c = ok(extractCandidate('```python\nif x < lo:\n    return lo\nreturn min(x, hi)\n```', target));
    expect(c.bare).toBe(true);
    expect(c.code).toBe('def clamp(x, lo=0, hi=10):\n    if x < lo:\n        return lo\n    return min(x, hi)');
  });

  it('accepts a body that was indented already, and one with a local helper', () => {
    expect(ok(extractCandidate('```\n    return x\n```', target)).code).toBe('def clamp(x, lo=0, hi=10):\n    return x');
    const helper = ok(extractCandidate('```python\ndef inner(v):\n    return v\nreturn inner(x)\n```', target));
    expect(helper.bare).toBe(true);
    expect(helper.code).toContain('    def inner(v):\n        return v\n    return inner(x)');
  });

  it('keeps imports and helpers as a preamble', () => {
    const c = ok(extractCandidate('```python\nimport math\nfrom typing import Optional\n\ndef _cap(v, hi):\n    return min(v, hi)\n\ndef clamp(x, lo=0, hi=10):\n    return max(lo, _cap(x, hi))\n```', target));
    expect(c.preamble).toBe('import math\n\nfrom typing import Optional\n\ndef _cap(v, hi):\n    return min(v, hi)');
    expect(c.code).toBe('def clamp(x, lo=0, hi=10):\n    return max(lo, _cap(x, hi))');
  });

  it('finds a method in a class the model repeated, decorators included', () => {
    const answer = '```python\nclass Box:\n    @staticmethod\n    def area(w, h):\n        return w * h\n```';
    const c = ok(extractCandidate(answer, { qualname: 'Box.area', origFunc: '@staticmethod\ndef area(w, h):\n    return w * h\n' }));
    expect(c.code).toBe('@staticmethod\ndef area(w, h):\n    return w * h');
    expect(c.preamble).toBe('');
  });

  it('takes a definition written without a code fence', () => {
    expect(ok(extractCandidate('def clamp(x, lo=0, hi=10):\n    return x\n', target)).code).toBe('def clamp(x, lo=0, hi=10):\n    return x');
  });

  it('reports no code: prose only, empty, or a block defining something else', () => {
    expect(extractCandidate('I cannot do that.', target)).toEqual({ ok: false, detail: 'the answer has no code block' });
    expect(extractCandidate('  ', target)).toEqual({ ok: false, detail: 'the answer is empty' });
    expect(extractCandidate('```python\ndef limit(x):\n    return x\n```', target)).toEqual({ ok: false, detail: 'the answer defines limit but not clamp' });
  });

  it('takes a function name from a dataset as text, never as a pattern', () => {
    // Names with regular-expression metacharacters: `f(` used to throw, `.*` matched anything.
    for (const qualname of ['f(', 'a.*', 'x+', '[g', 'h)', 'k\\', '(?<n>', 'a|b', '$^']) {
      const t = { qualname, origFunc: 'def f(x):\n    return x\n' };
      expect(() => extractCandidate('Nothing to see here.', t)).not.toThrow();
      expect(extractCandidate('def clamp(x):\n    return x\n', t)).toEqual({ ok: false, detail: 'the answer has no code block' });
    }
    expect(definesAtLineStart('def clamp(x):', '.*')).toBe(false);
    expect(definesAtLineStart('x = 1\n  async   def clamp (x):', 'clamp')).toBe(true);
    expect(definesAtLineStart('def clampx(x):', 'clamp')).toBe(false);
    expect(definesAtLineStart('define clamp(x):', 'clamp')).toBe(false);
    // A megabyte of blank lines before the definition is read in one pass.
    expect(definesAtLineStart(`${'\n   '.repeat(250_000)}def clamp(x):`, 'clamp')).toBe(true);
  });

  it('keeps a block cut off at the token limit: Python will judge it', () => {
    const c = ok(extractCandidate('```python\ndef clamp(x, lo=0, hi=10):\n    return max(lo, min(x,', target));
    expect(c.code).toContain('return max(lo, min(x,');
  });
});

describe('placing a candidate in the evaluation script', () => {
  const script = [
    '"""Module doc."""',
    'from __future__ import annotations',
    'import re',
    '',
    'class Box:',
    '    def __init__(self, w, h):',
    '        self.w, self.h = w, h',
    '',
    '    def area(self):',
    '        return self.w * self.h',
    '',
    'def test_area():',
    '    b = Box(2, 3)',
    '    assert b.area() == b.area_new_implementation()',
    '',
    'if __name__ == "__main__":',
    '    test_area()',
    '',
  ].join('\n');

  it('puts a method into its class and the preamble after the future import', () => {
    const c = ok(extractCandidate('```python\nimport math\n\nclass Box:\n    def area(self):\n        return math.prod([self.w, self.h])\n```', { qualname: 'Box.area', origFunc: 'def area(self):\n    return self.w * self.h\n' }));
    const out = candidateScript(script, c, 'Box.area').script;
    expect(out.indexOf('import math')).toBeGreaterThan(out.indexOf('from __future__ import annotations'));
    expect(out.indexOf('import math')).toBeLessThan(out.indexOf('import re'));
    // Inside the class (indented), before the tests.
    expect(out).toMatch(/\n {4}def area_new_implementation\(self\):\n {8}return math\.prod\(\[self\.w, self\.h\]\)/);
    expect(out.indexOf('area_new_implementation(self)')).toBeLessThan(out.indexOf('def test_area'));
  });

  it('leaves out helpers the script already defines: the script wins', () => {
    const out = insertPreamble('def helper():\n    return 1\n\nx = helper()\n', 'def helper():\n    return 2\n\ndef other():\n    return 3').script;
    expect(out).toBe('def other():\n    return 3\n\ndef helper():\n    return 1\n\nx = helper()\n');
  });

  it('throws when the candidate holds no function to place', () => {
    expect(() => candidateScript(script, { ok: true, code: 'x = = 1', preamble: '', bare: false }, 'Box.area')).toThrow();
  });
});
