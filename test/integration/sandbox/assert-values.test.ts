/**
 * A failed assert names the values it compared, as pytest shows them: the harness rewrites the
 * evaluation script's comparing asserts in the trusted process of an isolated run
 * (sandbox-image/harness/repost_assert_values.py). Tried in the real sandbox: the transform itself
 * (operands evaluated once and in order, skipped under -O, line numbers kept, reprs bounded and
 * guarded, a script that does not parse left alone), then the verdict an evaluation and the
 * verification server give a wrong answer (`verifyAnswer`, which both use).
 */
import { parseEvalDataset } from '../../../activities/eval/dataset';
import { verifyAnswer } from '../../../activities/eval/verdict';
import { runLimitsOf } from '../../../activities/sandbox';
import { outcomeOf } from '../../../activities/eval/outcome';
import { testConfig, warmExecutor } from './sandbox-env';

/** Python checks of the transform, run as a plain script that imports the harness module. */
const TRANSFORM_CHECKS = String.raw`
import sys, traceback
sys.path.insert(0, "/opt/repost/harness")
import repost_assert_values as rav

def run(source, optimize=-1):
    g = {rav.NAME: rav.Asserts(), "__name__": "checked"}
    exec(compile(rav.rewrite(source, "checked.py"), "checked.py", "exec", optimize=optimize), g)
    return g

def failure(source):
    try:
        run(source)
    except AssertionError as exc:
        return str(exc), traceback.extract_tb(exc.__traceback__)[-1].lineno
    raise SystemExit("no AssertionError from: " + source)

# Each operand once, left before right, whether the assert holds or fails.
g = run("calls = []\ndef L(v):\n    calls.append('L')\n    return v\ndef R(v):\n    calls.append('R')\n    return v\nassert L(1) == R(1)\ntry:\n    assert L(1) == R(2)\nexcept AssertionError:\n    pass\n")
assert g["calls"] == ["L", "R", "L", "R"], g["calls"]

# The candidate's side is "got", on either side; other comparisons show the operator.
common = "def f(x):\n    return x\ndef f_new_implementation(x):\n    return x + 1\n"
assert failure(common + "assert f(3) == f_new_implementation(3)\n") == ("expected 3, got 4", 5)
assert failure(common + "assert f_new_implementation(3) == f(3)\n") == ("expected 3, got 4", 5)
assert failure(common + "assert 5 in [1, 2]\n")[0] == "5 in [1, 2] is false"
# A name assigned from the candidate (an instance of a class answer) is the candidate's side too.
cls = "class C:\n    def __init__(self, k):\n        self.k = k\n    def get(self):\n        return self.k\ndef C_new_implementation(k):\n    return C(k + 1)\n"
assert failure(cls + "def t():\n    a = C(1)\n    b = C_new_implementation(1)\n    assert a.get() == b.get()\nt()\n") == ("expected 1, got 2", 11)
assert failure(cls + "def t():\n    b = C_new_implementation(1)\n    assert b.get() == C(1).get()\nt()\n")[0] == "expected 1, got 2"
assert failure(common + "assert [1] is not None and 1 < 0\n")[0] == ""  # not one comparison: left as it was

# A message of the script's own is kept; so is an assert that is not a comparison.
assert failure("assert 1 == 2, 'mine'\n")[0] == "mine"
assert failure("assert []\n")[0] == ""

# Lines as in the script, a multi-line assert included.
assert failure(common + "\n\ndef t():\n    assert f(1) == \\\n        f_new_implementation(1)\nt()\n")[1] == 8

# Skipped under -O, operands and all.
g = run("hit = []\ndef side():\n    hit.append(1)\n    return 1\nassert side() == 2\n", optimize=1)
assert g["hit"] == [], g["hit"]

# Reprs: a raising __repr__ gives the type's name, a long one is cut, a huge int does not break it.
bad = "class Bad:\n    def __repr__(self):\n        raise RuntimeError('no repr')\n"
assert failure(bad + "assert Bad() == 3\n")[0] == "<Bad> == 3 is false"
message = failure("assert 'x' * 100000 == 'y'\n")[0]
assert len(message) < 2 * rav.MAX_REPR + 40, len(message)
assert failure("assert 10 ** 5000 == 1\n")[0] == "<int> == 1 is false"

# Truth values raise as before (the comparison's own result is what is tested).
try:
    run("class A:\n    def __eq__(self, other):\n        return self\n    def __bool__(self):\n        raise ValueError('ambiguous')\nassert A() == 1\n")
    raise SystemExit("no ValueError")
except ValueError as exc:
    assert str(exc) == "ambiguous"

# In a class body, a generator and a comprehension's scope.
run("class K:\n    assert 1 == 1\n    x = [i for i in range(3) if i == i]\n")
g = run("def gen():\n    got = yield 1\n    assert got == 2\ngen_ = gen()\nnext(gen_)\n")

# A script that does not parse is not rewritten: compiling it raises its own SyntaxError.
assert rav.rewrite("def (:\n", "x.py") is None
print("transform checks passed")
`;

const SCRIPT = [
  'def add_tax(price, rate):',
  '    """The price with its tax, rounded to cents."""',
  '    return round(price * (1 + rate), 2)',
  '',
  'def test_add_tax():',
  '    assert add_tax(100, 0.2) == add_tax_new_implementation(100, 0.2)',
  '    assert add_tax(10, 0.05) == add_tax_new_implementation(10, 0.05)',
  '',
  'if __name__ == "__main__":',
  '    test_add_tax()',
].join('\n');

const RECORD = parseEvalDataset(
  JSON.stringify({
    func_name: 'add_tax',
    idx: 'assert-values-1',
    repo_name: 'example/shop',
    func_path: 'shop/tax.py',
    orig_func: SCRIPT.split('\n\ndef test_')[0],
    orig_context: '',
    eval_script: SCRIPT,
  }),
)[0]!;

describe('the values a failed assert compared', () => {
  const workerId = `assert-values-${process.pid}`;
  const sandbox = warmExecutor(workerId);

  test('the transform: each operand once and in order, skipped under -O, lines kept, reprs bounded and guarded', async () => {
    const result = await sandbox.executor.run({ script: TRANSFORM_CHECKS, timeoutSec: 30 });
    expect({ status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.slice(-2000) }).toMatchObject({ status: 'passed', stdout: 'transform checks passed' });
  });

  test('a wrong answer: the verdict names the assertion and the values, expected and got', async () => {
    const options = { timeoutSec: 30, limits: runLimitsOf(testConfig()) };
    const wrong = await verifyAnswer(sandbox.executor, RECORD, '```python\ndef add_tax(price, rate):\n    return round(price * rate, 2)\n```', options);
    if (!('outcome' in wrong)) throw new Error(`the sandbox failed: ${JSON.stringify(wrong.infrastructure.stderr)}`);
    expect(wrong.outcome).toMatchObject({ passed: false, kind: 'assertion' });
    // The line is the placed script's (the candidate's stub comes before the tests).
    expect(wrong.outcome.summary).toMatch(/^AssertionError at line \d+ in test_add_tax: assert add_tax\(100, 0\.2\) == add_tax_new_implementation\(100, 0\.2\) \(expected 120\.0, got 20\.0\)$/);

    const right = await verifyAnswer(sandbox.executor, RECORD, '```python\ndef add_tax(price, rate):\n    return round(price + price * rate, 2)\n```', options);
    expect('outcome' in right && right.outcome).toMatchObject({ passed: true });
  });

  test('a value whose repr raises still fails as an assertion, named by its type', async () => {
    const script = [
      'class Money:',
      '    def __init__(self, cents):',
      '        self.cents = cents',
      '    def __eq__(self, other):',
      '        return isinstance(other, Money) and other.cents == self.cents',
      '    def __repr__(self):',
      '        raise RuntimeError("no repr")',
      '',
      'def cents(x):',
      '    return Money(x)',
      '',
      'def test_cents():',
      '    assert cents(5) == cents_new_implementation(5)',
      '',
      'if __name__ == "__main__":',
      '    test_cents()',
    ].join('\n');
    const record = parseEvalDataset(JSON.stringify({ func_name: 'cents', idx: 'assert-values-2', repo_name: 'example/shop', func_path: 'shop/money.py', orig_func: 'def cents(x):\n    return Money(x)', orig_context: '', eval_script: script }))[0]!;
    const wrong = await verifyAnswer(sandbox.executor, record, 'def cents(x):\n    return Money(x + 1)', { timeoutSec: 30, limits: runLimitsOf(testConfig()) });
    if (!('outcome' in wrong)) throw new Error('the sandbox failed');
    expect(wrong.outcome).toMatchObject({ passed: false, kind: 'assertion' });
    expect(wrong.outcome.summary).toMatch(/\(expected <Money>, got <Money>\)$/);
    // Without an isolated candidate (the crawl's own runs) nothing is rewritten.
    const plain = await sandbox.executor.run({ script: script.replace('cents_new_implementation(5)', 'Money(6)'), timeoutSec: 30 });
    expect(outcomeOf(plain)).toMatchObject({ passed: false, kind: 'assertion' });
    expect(plain.exception).toMatchObject({ type: 'AssertionError', message: '' });
  });
});
