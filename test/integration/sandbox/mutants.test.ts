/**
 * The harness's mutant maker (sandbox-image/harness/repost_mutants.py), operator by operator. It
 * is pure (Python's `ast` on text, nothing executed), so these tests run it with the host's
 * python3; the mutation-run tests run it inside the sandbox image.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const MODULE = path.resolve(__dirname, '../../../sandbox-image/harness/repost_mutants.py');

interface Mutant {
  operator: string;
  line: number;
  diff: string;
  script: string;
}
interface Answer {
  target: string;
  candidates: number;
  examined: number;
  duplicates: number;
  invalid: number;
  leftOut: { output: number; message: number; equivalent: number };
  mutants: Mutant[];
}

function mutants(script: string, target: string, options: { cap?: number; seed?: number } = {}): Answer {
  const r = spawnSync('python3', [MODULE], { input: JSON.stringify({ script, target, cap: options.cap ?? 1000, seed: options.seed ?? 0 }), encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`repost_mutants.py failed (${r.status ?? r.signal}): ${r.stderr}`);
  return JSON.parse(r.stdout) as Answer;
}

/** The changed lines of a mutant's diff: what was removed and what was added, without the markers. */
function change(m: Mutant): { removed: string[]; added: string[] } {
  const lines = m.diff.split('\n').filter((l) => !l.startsWith('---') && !l.startsWith('+++'));
  return { removed: lines.filter((l) => l.startsWith('-')).map((l) => l.slice(1).trim()), added: lines.filter((l) => l.startsWith('+')).map((l) => l.slice(1).trim()) };
}

/** `before -> after` of every one-line mutant of an operator. */
function changes(answer: Answer, operator: string): string[] {
  return answer.mutants
    .filter((m) => m.operator === operator)
    .map(change)
    .map((c) => `${c.removed.join(' / ')} -> ${c.added.join(' / ')}`);
}

const lines = (...l: string[]) => `${l.join('\n')}\n`;

describe('mutants made with ast', () => {
  test('arithmetic: binary and augmented operators swapped, a unary minus or inversion dropped', () => {
    const answer = mutants(lines('def f(a, b):', '    a += b', '    c = a * b - b // 2', '    return -c % 3 ** 2'), 'f');
    expect(changes(answer, 'arithmetic').sort()).toEqual(
      [
        'a += b -> a -= b',
        'c = a * b - b // 2 -> c = a * b + b // 2',
        'c = a * b - b // 2 -> c = a / b - b // 2',
        'c = a * b - b // 2 -> c = a * b - b / 2',
        'return -c % 3 ** 2 -> return -c * 3 ** 2',
        'return -c % 3 ** 2 -> return -c % (3 * 2)', // in parentheses: the swap keeps the tree's shape
        'return -c % 3 ** 2 -> return c % 3 ** 2',
      ].sort(),
    );
  });

  test('comparison: each comparison replaced by its negation', () => {
    const answer = mutants(lines('def f(a, b, xs):', '    return a == b, a < b, a >= b, a in xs, a is None'), 'f');
    expect(changes(answer, 'comparison').map((c) => c.split(' -> ')[1])).toEqual([
      'return a != b, a < b, a >= b, a in xs, a is None',
      'return a == b, a >= b, a >= b, a in xs, a is None',
      'return a == b, a < b, a < b, a in xs, a is None',
      'return a == b, a < b, a >= b, a not in xs, a is None',
      'return a == b, a < b, a >= b, a in xs, a is not None',
    ]);
  });

  test('boundary: < and <=, > and >= exchanged', () => {
    const answer = mutants(lines('def f(a, b):', '    if a < b or a > 1:', '        return a <= b', '    return a >= b'), 'f');
    expect(changes(answer, 'boundary').sort()).toEqual(
      ['if a < b or a > 1: -> if a < b or a >= 1:', 'if a < b or a > 1: -> if a <= b or a > 1:', 'return a <= b -> return a < b', 'return a >= b -> return a > b'].sort(),
    );
  });

  test('boolean: and and or exchanged', () => {
    const answer = mutants(lines('def f(a, b, c):', '    return a and (b or c)'), 'f');
    expect(changes(answer, 'boolean').sort()).toEqual(['return a and (b or c) -> return a and (b and c)', 'return a and (b or c) -> return a or (b or c)'].sort());
  });

  test('negation: conditions of if, while, conditional expressions, comprehension filters and asserts negated; an existing not dropped', () => {
    const answer = mutants(
      lines('def f(xs):', '    assert xs', '    while len(xs) > 3:', '        xs = xs[1:]', '    if not xs:', '        return 0', '    return [x for x in xs if x] if xs else None'),
      'f',
    );
    expect(changes(answer, 'negation').sort()).toEqual(
      [
        'assert xs -> assert not xs',
        'while len(xs) > 3: -> while not len(xs) > 3:',
        'if not xs: -> if xs:',
        'return [x for x in xs if x] if xs else None -> return [x for x in xs if x] if not xs else None',
        'return [x for x in xs if x] if xs else None -> return [x for x in xs if not x] if xs else None',
      ].sort(),
    );
    // `not xs` negated and its `not` dropped give the same source: one mutant, one duplicate.
    expect(answer.mutants.filter((m) => m.operator === 'negation')).toHaveLength(5);
    expect(answer.duplicates).toBeGreaterThanOrEqual(1);
  });

  test('constant: numbers +1 and -1, booleans flipped, strings and displays emptied, any constant to None; the docstring left alone', () => {
    const answer = mutants(lines('def f():', '    """Doc."""', "    return (0, 1, 'ab', True, [1], {'k': 2})"), 'f');
    const after = changes(answer, 'constant').map((c) => c.split(' -> ')[1]);
    expect(after).toEqual(
      expect.arrayContaining([
        "return (1, 1, 'ab', True, [1], {'k': 2})",
        "return (-1, 1, 'ab', True, [1], {'k': 2})",
        "return (0, 2, 'ab', True, [1], {'k': 2})",
        "return (0, 0, 'ab', True, [1], {'k': 2})",
        "return (0, 1, '', True, [1], {'k': 2})",
        "return (0, 1, 'ab', False, [1], {'k': 2})",
        "return (0, 1, 'ab', True, [], {'k': 2})",
        "return (0, 1, 'ab', True, [1], {})",
        "return (0, 1, None, True, [1], {'k': 2})",
        'return ()',
      ]),
    );
    expect(answer.mutants.every((m) => !m.diff.includes('-    """Doc."""'))).toBe(true);
  });

  test('statement: a statement removed, or replaced by pass when alone in its block', () => {
    const answer = mutants(lines('def f(xs):', '    """Doc."""', '    total = 0', '    for x in xs:', '        total += x', '    return total'), 'f');
    const removed = answer.mutants.filter((m) => m.operator === 'statement').map(change);
    expect(removed).toEqual(
      expect.arrayContaining([
        { removed: ['total = 0'], added: [] },
        { removed: ['total += x'], added: ['pass'] },
        { removed: ['return total'], added: [] },
      ]),
    );
    // The docstring is never removed.
    expect(removed.some((c) => c.removed.includes('"""Doc."""'))).toBe(false);
  });

  test('return: a returned value replaced by None (a bare return or return None left alone)', () => {
    const answer = mutants(lines('def f(x):', '    if x:', '        return', '    if x is None:', '        return None', '    return x * 2'), 'f');
    expect(changes(answer, 'return')).toEqual(['return x * 2 -> return None']);
  });

  test('arguments: neighbouring positional arguments swapped, keeping their own text; starred ones and equal ones left', () => {
    const answer = mutants(lines('def f(a, b, c, rest):', '    g(a, b + 1,  # why', '      c)', '    h(*rest, a)', '    k(a, a)'), 'f');
    const swapped = answer.mutants.filter((m) => m.operator === 'arguments');
    expect(swapped.map(change)).toEqual([
      { removed: ['g(a, b + 1,  # why'], added: ['g(b + 1, a,  # why'] },
      { removed: ['g(a, b + 1,  # why', 'c)'], added: ['g(a, c,  # why', 'b + 1)'] },
    ]);
    expect(answer.duplicates).toBeGreaterThanOrEqual(1); // k(a, a) swapped is k(a, a)
  });

  test("only the target's body: its parameters' defaults, annotations, decorators and other functions stay; the last definition of the name is the target", () => {
    const script = lines(
      'def f(x):',
      '    return x - 100',
      '',
      '@decorate(1)',
      'def f(x: int = 5) -> int:',
      '    return x + 1',
      '',
      'def test_f():',
      '    assert f(1) == 2',
    );
    const answer = mutants(script, 'f');
    expect(answer.mutants.length).toBeGreaterThan(0);
    for (const m of answer.mutants) {
      const original = script.split('\n');
      const mutated = m.script.split('\n');
      // Lines 1-5 and the test keep their text; only line 6 (the body of the last f) changes.
      expect(mutated.slice(0, 5)).toEqual(original.slice(0, 5));
      expect(mutated.slice(-4)).toEqual(original.slice(-4));
      expect(m.line).toBe(3); // 1 is the decorator
    }
    expect(changes(answer, 'arithmetic')).toEqual(['return x + 1 -> return x - 1']);
  });

  test('a method inside its class, indented, with the rest of the class untouched', () => {
    const script = lines('class A:', '    def m(self, x):', '        return x < 3', '', '    def m_new_implementation(self, x):', '        return x < 3', '', 'print(A().m(1))');
    const answer = mutants(script, 'A.m_new_implementation');
    expect(changes(answer, 'boundary')).toEqual(['return x < 3 -> return x <= 3']);
    const boundary = answer.mutants.find((m) => m.operator === 'boundary')!;
    expect(boundary.script).toBe(script.replace('        return x < 3\n\nprint', '        return x <= 3\n\nprint'));
    expect(boundary.diff).toBe(['--- original', '+++ mutant', '@@ -1,2 +1,2 @@', ' def m_new_implementation(self, x):', '-    return x < 3', '+    return x <= 3'].join('\n'));
  });

  test('a mutant that does not compile is left out (a nonlocal without its binding)', () => {
    const answer = mutants(lines('def f():', '    x = 1', '    def g():', '        nonlocal x', '        x = 2', '    g()', '    return x'), 'f');
    expect(answer.invalid).toBeGreaterThanOrEqual(1);
    expect(answer.mutants.some((m) => change(m).removed.includes('x = 1') && change(m).added.length === 0)).toBe(false);
    expect(answer.mutants.some((m) => change(m).removed.includes('g()'))).toBe(true);
  });

  test('columns are read as UTF-8 bytes: a change after non-ASCII text on its line lands on the right node', () => {
    const answer = mutants(lines('def f(x):', "    return 'héllo wörld' + x"), 'f');
    expect(changes(answer, 'arithmetic')).toEqual(["return 'héllo wörld' + x -> return 'héllo wörld' - x"]);
  });

  test('comments and layout elsewhere in the function are kept in the mutant', () => {
    const answer = mutants(lines('def f(x):', '    # keep me', '    y = (x +', '         1)  # and me', '    return y'), 'f');
    const arithmetic = answer.mutants.find((m) => m.operator === 'arithmetic')!;
    expect(arithmetic.script).toContain('# keep me');
    expect(arithmetic.script).toContain('# and me');
    expect(arithmetic.script).toContain('y = (x - 1)');
  });

  test('capped, sampled with a seed, deterministic; every mutant different from the original and from each other', () => {
    const script = lines('def f(a, b, c):', '    if a < b and b > c:', '        return a + b * c - 1', "    return [a, b, 'x', 2.5, None]");
    const all = mutants(script, 'f');
    expect(all.mutants.length).toBeGreaterThan(12);
    const five = mutants(script, 'f', { cap: 5, seed: 7 });
    expect(five.mutants).toHaveLength(5);
    expect(mutants(script, 'f', { cap: 5, seed: 7 })).toEqual(five);
    const other = mutants(script, 'f', { cap: 5, seed: 8 });
    expect(other.mutants.map((m) => m.script)).not.toEqual(five.mutants.map((m) => m.script));
    const sources = new Set([script, ...all.mutants.map((m) => m.script)]);
    expect(sources.size).toBe(all.mutants.length + 1);
    // Each sampled mutant is one of the full set's.
    for (const m of five.mutants) expect(all.mutants.map((a) => a.script)).toContain(m.script);
    expect(five.examined).toBeLessThanOrEqual(five.candidates);
  });

  test("a class target: its methods' bodies are mutated, never their defaults, decorators or the class's bases", () => {
    const script = [
      'class Base:',
      '    pass',
      '',
      'class Tally(Base):',
      "    '''Counts.'''",
      '    def __init__(self, start=0):',
      '        self.n = start',
      '',
      '    @staticmethod',
      '    def clamp(k, low=1):',
      '        return max(k, low)',
      '',
      '    def add(self, k=1):',
      '        if k < 0:',
      "            raise ValueError('neg')",
      '        self.n += k',
      '        return self.n',
      '',
    ].join('\n');
    const answer = mutants(script, 'Tally');
    expect(answer.invalid).toBe(0);
    expect(changes(answer, 'boundary')).toEqual(['if k < 0: -> if k <= 0:']);
    expect(changes(answer, 'arithmetic')).toEqual(['self.n += k -> self.n -= k']);
    expect(changes(answer, 'arguments')).toEqual(['return max(k, low) -> return max(low, k)']);
    // Every mutant lies inside the class and keeps each signature, decorator and base as it was.
    for (const m of answer.mutants) {
      expect(m.script.startsWith('class Base:\n    pass\n')).toBe(true);
      const removed = change(m).removed;
      for (const line of ['class Tally(Base):', 'def __init__(self, start=0):', '@staticmethod', 'def clamp(k, low=1):']) {
        if (!removed.includes(line)) expect(m.script).toContain(line);
      }
      expect(change(m).added.join('\n')).not.toMatch(/start=|low=|k=\d/);
    }
  });

  describe('mutants no allowed test can see are left out and counted', () => {
    // The shape of a filter whose survivors changed only a logging call's arguments.
    const isExcluded = lines(
      'import logging',
      'logger = logging.getLogger(__name__)',
      '',
      'def is_excluded(path, patterns, verbose=False):',
      '    for pattern in patterns:',
      '        if path.startswith(pattern):',
      '            logger.debug("excluding %s: matches %s (%d)", path, pattern, len(pattern) + 1)',
      '            return True',
      '    if verbose:',
      '        logging.info(f"kept {path} after {len(patterns) * 2} patterns")',
      '    return False',
    );
    // The shape of an encoder whose survivors changed only printed or logged strings and a message.
    const encodeMessage = lines(
      'import json',
      '',
      'class Channel:',
      '    def _encode_message(self, message):',
      '        note = "could not encode " + str(type(message))',
      '        try:',
      '            data = json.dumps(message)',
      '        except TypeError:',
      '            print(note)',
      '            self._log.error("encoding failed for %r", message)',
      '            raise ValueError(f"bad message {message!r} of {len(str(message))} chars")',
      '        assert data, "empty encoding"',
      '        warnings = data.count("\\n")',
      '        return data.encode("utf-8") + b"\\n" * (warnings + 1)',
    );

    test('no mutant inside a logging call, nor in an `if` that only logs; the rest is still mutated', () => {
      const answer = mutants(isExcluded, 'is_excluded');
      // Every mutant touching those lines removes an enclosing block (the loop, the `if` that also returns): none changes them in place.
      for (const m of answer.mutants) {
        const { removed, added } = change(m);
        expect(added.join('\n')).not.toMatch(/logger\.debug|logging\.info|verbose/);
        if (removed.some((l) => /logger\.debug|logging\.info|verbose/.test(l))) expect(removed.some((l) => /^return True$/.test(l))).toBe(true);
      }
      // logger.debug: its statement, three arguments swapped twice, the text, `+ 1` and its constant...; the `if verbose:` block likewise.
      expect(answer.leftOut.output).toBeGreaterThanOrEqual(12);
      expect(answer.leftOut.message).toBe(0);
      expect(answer.leftOut.equivalent).toBe(0);
      // What a test can see is mutated as before: the loop's condition and both returns.
      expect(changes(answer, 'negation')).toEqual(['if path.startswith(pattern): -> if not path.startswith(pattern):']);
      expect(changes(answer, 'constant').sort()).toEqual(['return False -> return True', 'return True -> return False'].sort());
      expect(answer.candidates).toBe(answer.examined + answer.leftOut.output);
    });

    test('no mutant in printed or logged text, an exception message or a text only printed; the encoding itself is mutated', () => {
      const answer = mutants(encodeMessage, 'Channel._encode_message');
      // A line changed in place (one line out, one in) is never a printed, logged or message text's;
      // the assert's condition is mutated, its message is not.
      const inPlace = answer.mutants.map(change).filter((c) => c.removed.length === 1 && c.added.length === 1);
      expect(inPlace.filter((c) => /print\(|_log\.error|could not encode|bad message|empty encoding/.test(c.removed[0]!)).map((c) => c.added[0])).toEqual([
        'assert not data, "empty encoding"',
      ]);
      expect(answer.leftOut.output).toBeGreaterThan(0);
      expect(answer.leftOut.message).toBeGreaterThan(0);
      // Removing the text's assignment, or the raise, changes what a test sees (a NameError, no exception): still made.
      expect(changes(answer, 'statement')).toEqual(
        expect.arrayContaining([
          'note = "could not encode " + str(type(message)) -> ',
          'raise ValueError(f"bad message {message!r} of {len(str(message))} chars") -> ',
        ]),
      );
      expect(changes(answer, 'constant')).toEqual(expect.arrayContaining(['return data.encode("utf-8") + b"\\n" * (warnings + 1) -> return data.encode(\'\') + b"\\n" * (warnings + 1)']));
      // A name that merely contains "warn" is no output call: its arithmetic is mutated.
      expect(changes(answer, 'arithmetic')).toEqual(expect.arrayContaining(['return data.encode("utf-8") + b"\\n" * (warnings + 1) -> return data.encode("utf-8") + b"\\n" * (warnings - 1)']));
    });

    test('a text that is also returned is mutated: only a text read solely by output calls and messages is left out', () => {
      const answer = mutants(lines('def f(x):', '    label = "x=" + str(x)', '    print(label)', '    return label'), 'f');
      expect(changes(answer, 'constant')).toEqual(expect.arrayContaining(['label = "x=" + str(x) -> label = \'\' + str(x)']));
      expect(answer.leftOut.message).toBe(0);
    });

    test('a mutant compiling to the original bytecode is equivalent: left out, counted, never run', () => {
      // `if 1:` and `if 2:` compile alike (the test is folded away); `if 0:` drops the block and differs.
      const answer = mutants(lines('def f(x):', '    if 1:', '        x = x * 3', '    return x'), 'f');
      expect(answer.leftOut.equivalent).toBe(1);
      const constants = changes(answer, 'constant');
      expect(constants).toContain('if 1: -> if 0:');
      expect(constants).not.toContain('if 1: -> if 2:');
      // Dead code: nothing in it reaches the bytecode, so every change to it is equivalent.
      const dead = mutants(lines('def g(x):', '    if False:', '        x = x * 3 + 1', '    return x'), 'g');
      expect(dead.mutants.map(change).flatMap((c) => c.added).join('\n')).not.toMatch(/x \* 3 - 1|x \/ 3|x \* 4|x \* 2|x \* 3 \+ 2|x \* 3 \+ 0/);
      expect(dead.leftOut.equivalent).toBeGreaterThanOrEqual(8);
    });
  });

  test('a target the script does not define is an error naming it', () => {
    const r = spawnSync('python3', [MODULE], { input: JSON.stringify({ script: 'def g():\n    return 1\n', target: 'f' }), encoding: 'utf8', timeout: 60_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/LookupError: function f not found in the script/);
  });
});
