import { assertionsIn, failingAssertion, isAssertion, removeAssertions, scriptFrames, testSourceOf } from '../../../activities/eval/assertions';
import { extractCandidate } from '../../../activities/eval/candidate';
import { candidateScript } from '../../../activities/eval/candidate-script';
import { parsePython } from '../../../activities/eval/function-source';

const PORT = 'def parse_port(text):\n    """The TCP port in `text` (surrounding spaces allowed); ValueError outside 1..65535."""\n    port = int(text.strip())\n    if not 1 <= port <= 65535:\n        raise ValueError(port)\n    return port\n';

/** An evaluation script in RepoST's shape: the function, a helper, the test, the main block. */
const SCRIPT = [
  PORT,
  '',
  'def _error(call):',
  '    try:',
  '        call()',
  '    except Exception as exc:',
  '        return type(exc).__name__',
  '    return None',
  '',
  '',
  'def test_parse_port():',
  '    assert parse_port("80") == parse_port_new_implementation("80")',
  '    assert parse_port(" 8080 ") == parse_port_new_implementation(" 8080 ")',
  '    assert _error(lambda: parse_port("0")) == _error(lambda: parse_port_new_implementation("0"))',
  '    assert _error(lambda: parse_port(None)) == _error(lambda: parse_port_new_implementation(None))',
  '',
  '',
  'if __name__ == "__main__":',
  '    test_parse_port()',
  '',
].join('\n');

const line = (text: string) => SCRIPT.split('\n').findIndex((l) => l.includes(text)) + 1;

function placedWith(answer: string): string {
  const c = extractCandidate(answer, { qualname: 'parse_port', origFunc: PORT });
  if (!c.ok) throw new Error(c.detail);
  return candidateScript(SCRIPT, c, 'parse_port').script;
}

/** A traceback as Python prints it for a run of `script`, through the given 1-based lines. */
function traceback(script: string, frames: { line: number; name: string }[], error: string): string {
  const lines = script.split('\n');
  const body = frames.map((f) => `  File "/home/user/run/eval_script.py", line ${f.line}, in ${f.name}\n    ${lines[f.line - 1]!.trim()}`).join('\n');
  return `Traceback (most recent call last):\n${body}\n${error}`;
}

describe('assertions of a script', () => {
  it("are `assert` statements and calls of `assert*` functions, in source order", () => {
    const root = parsePython('assert a\nself.assertEqual(x, y)\nnp.testing.assert_allclose(a, b)\nprint(assertion)\nx = assert_ok(1)\n').rootNode;
    expect(assertionsIn(root).map((n) => n.text)).toEqual(['assert a', 'self.assertEqual(x, y)', 'np.testing.assert_allclose(a, b)']);
    expect(isAssertion(root.namedChildren[3]!)).toBe(false);
  });

  it("reads the script's frames from a traceback, and only the script's", () => {
    const tb = 'Traceback (most recent call last):\n  File "/home/user/run/eval_script.py", line 30, in <module>\n    test_x()\n  File "/usr/lib/python3.11/unittest/case.py", line 9, in fail\n    raise x\n  File "/home/user/run/eval_script.py", line 12, in test_x\n    assert a\nAssertionError';
    expect(scriptFrames(tb)).toEqual([
      { line: 30, name: '<module>' },
      { line: 12, name: 'test_x' },
    ]);
  });
});

describe('the assertion a failing run stopped at', () => {
  it("is found through the run's own lines (the candidate moved them) and named by the record's", () => {
    const run = placedWith('```python\ndef parse_port(text):\n    port = int(text)\n    if port < 1 or port > 65535:\n        raise ValueError("bad port")\n    return port\n```');
    const assertLine = run.split('\n').findIndex((l) => l.includes('parse_port(None)')) + 1;
    const candidateLine = run.split('\n').findIndex((l) => l.includes('port = int(text)')) + 1;
    const helperLine = run.split('\n').findIndex((l) => l.includes('        call()')) + 1;
    // The candidate raised TypeError inside the helper's call: the frames pass through the assertion's lambda.
    const tb = traceback(
      run,
      [
        { line: run.split('\n').findIndex((l) => l.includes('    test_parse_port()')) + 1, name: '<module>' },
        { line: assertLine, name: 'test_parse_port' },
        { line: helperLine, name: '_error' },
        { line: assertLine, name: '<lambda>' },
        { line: candidateLine, name: 'parse_port_new_implementation' },
      ],
      "AssertionError",
    );
    expect(assertLine).not.toBe(line('parse_port(None)'));
    expect(failingAssertion(run, SCRIPT, tb)).toEqual({ line: line('parse_port(None)'), text: SCRIPT.split('\n')[line('parse_port(None)') - 1]!.trim() });
  });

  it("is none when the failure passed through no assertion of the record's (a crash outside them, the candidate's own assert)", () => {
    const run = placedWith('```python\ndef parse_port(text):\n    assert text is not None\n    return int(text)\n```');
    const own = run.split('\n').findIndex((l) => l.includes('assert text is not None')) + 1;
    const main = run.split('\n').findIndex((l) => l.includes('    test_parse_port()')) + 1;
    expect(failingAssertion(run, SCRIPT, traceback(run, [{ line: main, name: '<module>' }, { line: own, name: 'parse_port_new_implementation' }], 'AssertionError'))).toBeNull();
    expect(failingAssertion(run, SCRIPT, '')).toBeNull();
    expect(failingAssertion(run, SCRIPT, 'AssertionError: printed by the candidate')).toBeNull();
  });
});

describe('removing assertions', () => {
  const target = { line: line('parse_port(None)'), text: SCRIPT.split('\n')[line('parse_port(None)') - 1]!.trim() };

  it('takes the statement and its line, and the script still parses and tests', () => {
    const out = removeAssertions(SCRIPT, [target]);
    if (!out.ok) throw new Error(out.reason);
    expect(out.script).toBe(SCRIPT.replace(`    ${target.text}\n`, ''));
    expect(out.removed).toEqual([target]);
    expect(parsePython(out.script).rootNode.hasError).toBe(false);
  });

  it('keeps a block valid: `pass` where it would be empty, the `;` of a shared line', () => {
    const script = 'def test_a():\n    x = 1; assert x == 1\n    for i in range(2):\n        assert i >= 0\n    assert x\n';
    const out = removeAssertions(script, [
      { line: 2, text: 'assert x == 1' },
      { line: 4, text: 'assert i >= 0' },
    ]);
    if (!out.ok) throw new Error(out.reason);
    expect(out.script).toBe('def test_a():\n    x = 1\n    for i in range(2):\n        pass\n    assert x\n');
  });

  it('refuses what would leave a test without an assertion, and an assertion that is not where it is said to be', () => {
    const script = 'def test_a():\n    assert f(1) == g(1)\n\ndef test_b():\n    assert f(2) == g(2)\n';
    expect(removeAssertions(script, [{ line: 2, text: 'assert f(1) == g(1)' }])).toEqual({ ok: false, reason: 'test_a would be left without an assertion' });
    expect(removeAssertions(script, [{ line: 3, text: 'assert f(1)' }])).toEqual({ ok: false, reason: 'line 3 holds no assertion `assert f(1)`' });
  });

  it('counts the assertions of the helpers a test calls as the test’s own', () => {
    // The test's only assertion is in a helper: removing it leaves the test checking nothing,
    // however many assertions other code of the script (here the code under test) holds.
    const script = [
      'def f(x):',
      '    assert x is not None',
      '    return x + 1',
      '',
      'def _same(x):',
      '    assert f(x) == f_new_implementation(x)',
      '',
      'def test_f():',
      '    for x in (1, 2):',
      '        _same(x)',
      '',
      'def test_g():',
      '    assert f(3) == f_new_implementation(3)',
      '',
    ].join('\n');
    expect(removeAssertions(script, [{ line: 6, text: 'assert f(x) == f_new_implementation(x)' }], 'f')).toEqual({ ok: false, reason: 'test_f would be left without an assertion' });
    // Two helpers: one removed, the other still asserts for the test.
    const two = script.replace('        _same(x)\n', '        _same(x)\n        _bigger(x)\n') + '\ndef _bigger(x):\n    assert f_new_implementation(x) > x\n';
    const out = removeAssertions(two, [{ line: 6, text: 'assert f(x) == f_new_implementation(x)' }], 'f');
    expect(out.ok).toBe(true);
  });

  it('refuses a removal that leaves no assertion on what the target gives', () => {
    const script = [
      'def f(x):',
      '    return x * 2',
      '',
      'def test_f():',
      '    got = f_new_implementation(3)',
      '    want = f(3)',
      '    assert want == got',
      '    assert isinstance(3, int)',
      '    ok = [f(x) == f_new_implementation(x) for x in (1, 2)]',
      '    assert all(ok)',
      '    assert len("abc") == 3',
      '',
    ].join('\n');
    // Removing the direct comparison keeps `assert all(ok)`, bound from the target's results.
    const one = removeAssertions(script, [{ line: 7, text: 'assert want == got' }], 'f');
    expect(one.ok).toBe(true);
    // Removing both leaves only assertions that check nothing the target gave.
    const both = removeAssertions(script, [{ line: 7, text: 'assert want == got' }, { line: 10, text: 'assert all(ok)' }], 'f');
    expect(both).toEqual({ ok: false, reason: 'no assertion on what f gives would be left' });
    // Without the target's name (an older caller), only the counts are checked.
    expect(removeAssertions(script, [{ line: 7, text: 'assert want == got' }, { line: 10, text: 'assert all(ok)' }]).ok).toBe(true);
  });

  it('follows the target’s results into the helpers they are handed to', () => {
    const script = [
      'def f(x):',
      '    return x * 2',
      '',
      'def _check(a, b):',
      '    assert a == b',
      '',
      'def test_f():',
      '    _check(f(1), f_new_implementation(1))',
      '    assert f_new_implementation(2) == 4',
      '    assert True',
      '',
    ].join('\n');
    expect(removeAssertions(script, [{ line: 9, text: 'assert f_new_implementation(2) == 4' }], 'f').ok).toBe(true);
    expect(removeAssertions(script, [{ line: 5, text: 'assert a == b' }, { line: 9, text: 'assert f_new_implementation(2) == 4' }], 'f')).toEqual({
      ok: false,
      reason: 'no assertion on what f gives would be left',
    });
  });

  it('shows the judge the test holding the assertion', () => {
    expect(testSourceOf(SCRIPT, target.line)).toMatch(/^def test_parse_port\(\):\n[\s\S]*parse_port_new_implementation\(None\)\)$/);
  });
});
