/**
 * The sanity check that refuses tests judging the implementation itself (its code object,
 * bytecode, source text or identity) instead of its behaviour: each way of reading it is refused
 * with the check's name, and tests that only compare results (RepoST's published records too) are not.
 */
import * as fs from 'node:fs';
import { checkClassTestScript, checkTestScript } from '../../../activities/llm/sanity';
import { REPOST_SAMPLE } from '../../support/fixtures';

const ORIGINAL = `def clip(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
`;

/** A test script whose test function has `extra` as its first lines (indented by the caller). */
function script(extra: string, helpers = '', preamble = 'import inspect\nimport dis\nimport marshal\nimport sys\n'): string {
  return `${preamble}
${ORIGINAL}
${helpers}
def test_clip():
${extra}
    assert clip(5, 0, 10) == clip_new_implementation(5, 0, 10)
    assert clip(-1, 0, 10) == clip_new_implementation(-1, 0, 10)
    assert clip(11, 0, 10) == clip_new_implementation(11, 0, 10)

if __name__ == "__main__":
    test_clip()
`;
}

function refusal(code: string): string | undefined {
  const report = checkTestScript({ functionName: 'clip', originalFunction: ORIGINAL, sandboxScript: ORIGINAL, script: code });
  return report.failures.find((f) => f.check === 'tests_read_implementation')?.detail;
}

describe('tests_read_implementation', () => {
  it('accepts tests that compare results only', () => {
    expect(refusal(script(''))).toBeUndefined();
    // Names, ids and `is` on values the implementations returned are behaviour.
    expect(refusal(script('    r = clip(1, 0, 2)\n    assert r is not None\n    print(clip.__name__, id(r))'))).toBeUndefined();
  });

  const attacks: [string, string, string | null][] = [
    ['the code object', '    assert clip.__code__.co_code == clip_new_implementation.__code__.co_code', null],
    ['a code object taken through getattr', '    assert getattr(clip, "__code__") == getattr(clip_new_implementation, "__code__")', null],
    ['the constants', '    c = clip_new_implementation\n    assert c.__code__.co_consts', null],
    ['the source text', '    assert inspect.getsource(clip_new_implementation).count("if") == 2', null],
    ['source lines, imported by name', '    assert len(getsourcelines(clip_new_implementation)[0]) == 6', 'from inspect import getsourcelines\n'],
    ['the disassembly', '    assert len(list(dis.get_instructions(clip_new_implementation))) == 20', null],
    ['the disassembler under another name', '    assert d.Bytecode(clip_new_implementation)', 'import dis as d\n'],
    ['serialized bytecode', '    assert marshal.dumps(clip.__code__) == marshal.dumps(clip_new_implementation.__code__)', null],
    ['the script file itself', '    assert "clip_new_implementation" not in open(__file__).read()', null],
    ['the script file through argv', '    assert open(sys.argv[0]).read()', null],
    ['identity', '    assert clip is not clip_new_implementation', null],
    ['identity through id()', '    assert id(clip) != id(clip_new_implementation)', null],
    ['names compared', '    assert clip.__name__ != clip_new_implementation.__qualname__', null],
    ['names in a condition', '    if clip_new_implementation.__name__ == "clip_new_implementation":\n        raise SystemExit(1)', null],
  ];
  it.each(attacks)('refuses tests reading %s', (_what, extra, preamble) => {
    const code = script(extra, '', preamble ?? undefined);
    expect(refusal(code)).toMatch(/judge the implementation itself/);
    // Named among the refusing checks, next to nothing else: the rest of the script is sound.
    const report = checkTestScript({ functionName: 'clip', originalFunction: ORIGINAL, sandboxScript: ORIGINAL, script: code });
    expect(report.failures.map((f) => f.check)).toEqual(['tests_read_implementation']);
  });

  it('follows the tests into the helpers they call, not into the code under test', () => {
    const helper = 'def same_code(a, b):\n    return a.__code__.co_code == b.__code__.co_code\n\n';
    expect(refusal(script('    assert same_code(clip, clip_new_implementation)', helper))).toMatch(/line \d+: reads a code object/);
    // The code under test (and what it calls) may look at code objects for its own purposes.
    const own = `import inspect\n\ndef describe(fn):\n    return inspect.getsource(fn)\n\n${ORIGINAL.replace('    return x\n', '    describe(clip)\n    return x\n')}`;
    const code = `${own}\ndef test_clip():\n    assert clip(5, 0, 10) == clip_new_implementation(5, 0, 10)\n    assert clip(-1, 0, 10) == clip_new_implementation(-1, 0, 10)\n    assert clip(11, 0, 10) == clip_new_implementation(11, 0, 10)\n\nif __name__ == "__main__":\n    test_clip()\n`;
    expect(refusal(code)).toBeUndefined();
  });

  it('reads the __main__ block too', () => {
    const code = script('').replace('    test_clip()\n', '    assert clip is not clip_new_implementation\n    test_clip()\n');
    expect(refusal(code)).toMatch(/identity/);
  });

  it('passes every one of RepoST’s published records', () => {
    const records = fs.readFileSync(REPOST_SAMPLE, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { func_name: string; orig_func: string; eval_script: string });
    const refused = records
      .map((r) => ({ name: r.func_name, detail: checkTestScript({ functionName: r.func_name, originalFunction: r.orig_func, sandboxScript: r.eval_script, script: r.eval_script }).failures.find((f) => f.check === 'tests_read_implementation')?.detail }))
      .filter((r) => r.detail);
    expect(refused).toEqual([]);
  });
});

describe('tests_read_implementation for a class environment', () => {
  const KEPT = 'class Account:\n    def __init__(self, balance=0):\n        self.balance = balance\n\n    def deposit(self, amount):\n        self.balance += amount\n        return self.balance\n';
  const tests = (extra: string) => `${KEPT}

def test_Account_deposit():
${extra}
    a = Account(5)
    b = Account_new_implementation(5)
    assert a.deposit(3) == b.deposit(3)
    assert a.balance == b.balance
    assert a.deposit(1) == b.deposit(1)


if __name__ == "__main__":
    test_Account_deposit()
`;
  const checks = (code: string) => checkClassTestScript({ className: 'Account', originalClass: KEPT, methods: 2, script: code, sandboxScript: KEPT }).failures.map((f) => f.check);

  it('accepts tests of behaviour and refuses tests of the class itself', () => {
    expect(checks(tests(''))).toEqual([]);
    expect(checks(tests('    assert Account.deposit.__code__.co_code == Account_new_implementation.deposit.__code__.co_code'))).toEqual(['tests_read_implementation']);
    expect(checks(tests('    assert Account is not Account_new_implementation'))).toEqual(['tests_read_implementation']);
    expect(checks(tests('    assert Account.__qualname__ != Account_new_implementation.__qualname__'))).toEqual(['tests_read_implementation']);
    expect(checks(`import inspect\n${tests('    assert inspect.getsource(Account_new_implementation)')}`)).toEqual(['tests_read_implementation']);
  });
});
