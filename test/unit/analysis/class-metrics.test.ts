/**
 * Each OpenClassGen metric on hand-written classes (test/fixtures/classes), with the figures
 * worked out by hand in the comments. test/integration/radon.test.ts checks the cyclomatic ones
 * against radon on the same files.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cohesion, methodMetrics, RepositoryAnalyzer, type ClassInfo } from '../../../activities/analysis';

const ROOT = path.resolve(__dirname, '../../fixtures/classes');

/** The 1-based line of `def <name>(` in a fixture file (the line radon reports). */
function defLine(file: string, name: string, nth = 0): number {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  return lines.map((l, i) => (l.includes(`def ${name}(`) ? i + 1 : 0)).filter(Boolean)[nth]!;
}

function fn(source: string) {
  const a = RepositoryAnalyzer.fromSources({ 'm.py': source });
  expect(a.skipped).toEqual([]);
  return methodMetrics(a.repo.modules.get('m.py')!.tree.rootNode.firstNamedChild!);
}

describe('class metrics', () => {
  let classes: ClassInfo[];
  beforeAll(async () => {
    classes = (await RepositoryAnalyzer.open(ROOT)).classes();
  });
  const get = (name: string) => {
    const c = classes.find((x) => x.qualname === name);
    if (!c) throw new Error(`no class ${name}`);
    return c;
  };

  it('lists every non-test class of the fixture', () => {
    expect(classes.map((c) => c.qualname).sort()).toEqual(['Account', 'Canvas', 'Circle', 'Counter', 'Empty', 'Flow', 'Ring', 'Shape', 'Square', 'Unit']);
  });

  it('complexity per method: cyclomatic (radon rules), essential, nesting', () => {
    const rows = Object.fromEntries(get('Flow').methods.map((m) => [m.name, [m.line, m.cyclomatic, m.essential, m.maxNesting]]));
    expect(rows).toEqual({
      // 1 + if + for + for-else + if + and + elif + 2 except + try-else + conditional = 11.
      // Branches out: `return "empty"` (first if), `break` (inner if and the loop), `continue`
      // with a statement after its if (inner if): 3 structures, essential 4. for > if: nesting 2.
      classify: [defLine('shapes/flow.py', 'classify'), 11, 4, 2],
      // The nested function's if is its own; comprehension for + 2 ifs, the lambda's
      // conditional, match of 3 cases less the catch-all `case n`: 1 + 3 + 1 + 2 = 7. Every
      // return ends its case, the match ends the method: essential 1.
      summarize: [defLine('shapes/flow.py', 'summarize'), 7, 1, 1],
      // while + while-else + if + assert (its `and` does not count) = 5; the continue has a
      // statement after its if: essential 2.
      drain: [defLine('shapes/flow.py', 'drain'), 5, 2, 2],
      // A continue that ends the loop body leaves nothing.
      skip_none: [defLine('shapes/flow.py', 'skip_none'), 3, 1, 2],
      // Returns in tail position: if/elif/else returning is structured.
      sign: [defLine('shapes/flow.py', 'sign'), 3, 1, 1],
      // except* handlers (TryStar) count nothing in radon; the comprehension counts 1.
      gather: [defLine('shapes/flow.py', 'gather'), 2, 1, 1],
      // with > for > while > if: nesting 4; break leaves the if and the while: essential 3.
      nested: [defLine('shapes/flow.py', 'nested'), 4, 3, 4],
    });
    const m = get('Flow').metrics;
    expect(m.cyclomatic).toEqual({ total: 35, max: 11, mean: 5 });
    expect(m.essential).toEqual({ total: 13, max: 4, mean: 1.857 });
    expect(m.maxNesting).toBe(4);
    expect(get('Empty').metrics.cyclomatic).toEqual({ total: 0, max: 0, mean: 0 });
  });

  it('cyclomatic complexity follows radon on the constructs it special-cases', () => {
    // A match: cases less one when some case is a catch-all (`_`, a bare name, `(x)`), not `_ as x` or `(x,)`.
    expect(fn('def f(x):\n    match x:\n        case 1:\n            pass\n        case (y):\n            pass\n').cyclomatic).toBe(2);
    expect(fn('def f(x):\n    match x:\n        case 1:\n            pass\n        case (y,):\n            pass\n').cyclomatic).toBe(3);
    expect(fn('def f(x):\n    match x:\n        case 1:\n            pass\n        case _ as q:\n            pass\n').cyclomatic).toBe(3);
    // A match guard adds nothing by itself, its `and` does.
    expect(fn('def f(x):\n    match x:\n        case 1 if x and x:\n            pass\n').cyclomatic).toBe(3);
    // Decorators, defaults and annotations of the function do not count; a nested class does not either.
    expect(fn('def f(a=1 if X else 2) -> (int if X else str):\n    class C:\n        y = 1 if a else 2\n    return a\n').cyclomatic).toBe(1);
    // Each boolean operator counts (`a and b and c` is one BoolOp of 3 values for radon: 2).
    expect(fn('def f(a, b, c):\n    return a and b and c or (a if b else c)\n').cyclomatic).toBe(5);
    // try/finally alone is no decision; a loop's else is one.
    expect(fn('def f(a):\n    try:\n        pass\n    finally:\n        pass\n    while a:\n        a -= 1\n    else:\n        pass\n').cyclomatic).toBe(3);
  });

  it('essential complexity: branches out of decisions and loops, tail jumps excluded', () => {
    // An early return leaves its if.
    expect(fn('def f(a):\n    if a:\n        return 1\n    a += 1\n    return a\n').essential).toBe(2);
    // A return that ends a try body followed by an else does not end the function.
    expect(fn('def f(a):\n    try:\n        return g(a)\n    except E:\n        pass\n    else:\n        pass\n').essential).toBe(2);
    // A return in a loop never lands where the loop's end would (the loop goes on): loop and if.
    expect(fn('def f(xs):\n    for x in xs:\n        if x:\n            return x\n    return None\n').essential).toBe(3);
    // raise is an exception, not a branch.
    expect(fn('def f(a):\n    if a:\n        raise ValueError(a)\n    return a\n').essential).toBe(1);
    // A jump inside a nested function is the nested function's.
    expect(fn('def f(a):\n    if a:\n        def g():\n            if a:\n                return 1\n            return 2\n    return a\n').essential).toBe(1);
    // Never above the cyclomatic complexity.
    const m = fn('def f(a):\n    while a:\n        if a:\n            break\n        a -= 1\n    return a\n');
    expect([m.cyclomatic, m.essential]).toEqual([3, 3]);
  });

  it('size: lines of code, comments (docstrings included) and blanks; methods; class and instance attributes', () => {
    const m = get('Account').metrics;
    // 29 lines (class line to the last statement): 6 blank, 6 comment or docstring lines, 17 code.
    expect([m.totalLines, m.codeLines, m.commentLines, m.blankLines, m.commentToCodeRatio]).toEqual([29, 17, 6, 6, 0.353]);
    expect(m.methods).toBe(5);
    // currency, and the bare annotation `limit: int`.
    expect(m.classAttributes).toBe(2);
    // owner, balance, history, alerts (`+=` assigns too).
    expect(m.instanceAttributes).toBe(4);
    // Assigning through a property (`self.value = ...`) is no attribute of its own.
    expect(get('Counter').metrics.instanceAttributes).toBe(1);
    expect(get('Shape').metrics.classAttributes).toBe(2);
    expect(get('Flow').metrics.instanceAttributes).toBe(1);
  });

  it('cohesion: LCOM4 and LCOM*', () => {
    // deposit and last share `history`; notify calls alert; __init__ is left out: 2 groups.
    // LCOM*: m = 4; balance 1, history 2, alerts 1, owner 1 method: mean 1.25; (1.25 - 4) / (1 - 4).
    expect([get('Account').metrics.lcom4, get('Account').metrics.lcomStar]).toEqual([2, 0.917]);
    // Getter and setter of `value` share `count`; bump uses the property: one group.
    // LCOM*: m = 3, count used by 2: (2 - 3) / (1 - 3) = 0.5.
    expect([get('Counter').metrics.lcom4, get('Counter').metrics.lcomStar]).toEqual([1, 0.5]);
    // Seven methods, one using attributes: 7 groups; every attribute used by one method of 7: 1.
    expect([get('Flow').metrics.lcom4, get('Flow').metrics.lcomStar]).toEqual([7, 1]);
    // describe calls area: one group; no attribute: LCOM* undefined.
    expect([get('Shape').metrics.lcom4, get('Shape').metrics.lcomStar]).toEqual([1, null]);
    // Only a constructor: no method counts.
    expect([get('Ring').metrics.lcom4, get('Ring').metrics.lcomStar]).toEqual([0, null]);
    const use = (used: string[]) => ({ used: new Set(used), assigned: new Set<string>() });
    expect(cohesion([])).toEqual({ lcom4: 0, lcomStar: null });
    expect(cohesion([{ name: 'a', use: use(['x']) }, { name: 'b', use: use(['x']) }, { name: 'c', use: use(['y']) }])).toEqual({ lcom4: 2, lcomStar: 0.75 });
  });

  it('coupling: fan-in, fan-out, repository definitions used, coupling between objects', () => {
    const m = (name: string) => {
      const x = get(name).metrics;
      return { fanIn: x.fanIn, fanOut: x.fanOut, dependencies: x.dependencies, cbo: x.cbo };
    };
    // Shape is named by Circle's and Square's bases and Canvas.add's annotation; the import line is no use.
    // Coupled: the three classes that name it.
    expect(m('Shape')).toEqual({ fanIn: 3, fanOut: { local: 0, external: 0, total: 0 }, dependencies: 0, cbo: 3 });
    // Circle is named by draw(), Ring's bases and the test method (test code counts).
    // It names Shape, Unit, scale (local definitions) and math (external).
    // Coupled: Shape and Unit (named by it), Ring and TestCircle (naming it).
    expect(m('Circle')).toEqual({ fanIn: 3, fanOut: { local: 3, external: 1, total: 4 }, dependencies: 3, cbo: 4 });
    // Named by `geometry.Square(...)` in Canvas.square.
    expect(m('Square')).toEqual({ fanIn: 1, fanOut: { local: 1, external: 0, total: 1 }, dependencies: 1, cbo: 2 });
    // Ring names Circle (super() is a builtin).
    expect(m('Ring')).toEqual({ fanIn: 0, fanOut: { local: 1, external: 0, total: 1 }, dependencies: 1, cbo: 1 });
    // Canvas names Shape and the module geometry; the definitions: Shape and, through the module, Square.
    expect(m('Canvas')).toEqual({ fanIn: 0, fanOut: { local: 2, external: 0, total: 2 }, dependencies: 2, cbo: 2 });
    expect(m('Unit')).toEqual({ fanIn: 1, fanOut: { local: 0, external: 0, total: 0 }, dependencies: 0, cbo: 1 });
  });

  it('inheritance: depth of the tree of repository bases and number of children', () => {
    const dit = (n: string) => [get(n).metrics.inheritanceDepth, get(n).metrics.children];
    expect(dit('Shape')).toEqual([0, 2]);
    expect(dit('Circle')).toEqual([1, 1]);
    expect(dit('Ring')).toEqual([2, 0]);
    expect(dit('Square')).toEqual([1, 0]);
  });

  it('documentation levels: full, partial, none', () => {
    expect(['Shape', 'Counter', 'Circle', 'Account', 'Unit', 'Flow', 'Empty', 'Square'].map((n) => [n, get(n).documentation, get(n).metrics.documentedUnits, get(n).metrics.programUnits])).toEqual([
      ['Shape', 'full', 3, 3],
      ['Counter', 'full', 5, 5],
      ['Circle', 'partial', 3, 4],
      ['Account', 'partial', 5, 6],
      ['Unit', 'partial', 1, 2],
      ['Flow', 'none', 0, 8],
      ['Empty', 'none', 0, 1],
      ['Square', 'none', 0, 3],
    ]);
  });
});
