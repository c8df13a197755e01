/**
 * The seams the code keeps, read statically: a target's kind is looked up in its kind modules
 * only (activities/targets/, and workflows/target-kinds.ts on the workflows' side), never
 * branched on elsewhere; and functionWorkflow reads as the paper's loop, short, its stages in
 * files of their own.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const KIND_MODULES = /^(activities\/targets\/|workflows\/target-kinds\.ts$)/;
/** The analysis's `kind` is a definition's (function, method, class, variable), not a target's. */
const OTHER_KINDS = /^activities\/analysis\//;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    return e.isDirectory() ? sourceFiles(rel) : e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** A comparison of a target reference's kind (`fn.kind === 'class'`, `target.kind !== ...`). */
const KIND_BRANCH = /\b(fn|target|ref|cls|input\.fn|r\.fn)\.kind\s*[!=]==/;
/** Any kind compared with a kind's name, either way round (`kind === 'class'`, `'function' !== t.kind`, `placement == "class"`). */
const KIND_NAME_BRANCH = /\b\w*kind\s*[!=]==?\s*['"`](class|function)['"`]|['"`](class|function)['"`]\s*[!=]==?\s*[\w.]*kind\b/i;

/**
 * Comparisons left outside the kind modules, each with its reason (file and the line's text, so a
 * moved line still matches and a new one does not).
 */
const JUSTIFIED: Readonly<Record<string, { line: string; why: string }>> = {
  'activities/store/records.ts': {
    line: "return r.kind === 'class';",
    why: "isClassRecord: the stored record's discriminant, the type guard that narrows a stored record to a class environment's; the store sits below the kind modules and holds records, not targets",
  },
};

function branchesOutsideKindModules(): string[] {
  const files = ['activities', 'workflows', 'scripts', 'workers'].flatMap(sourceFiles).filter((f) => !KIND_MODULES.test(f) && !OTHER_KINDS.test(f));
  expect(files.length).toBeGreaterThan(100);
  return files.flatMap((f) =>
    fs
      .readFileSync(path.join(ROOT, f), 'utf8')
      .split('\n')
      .flatMap((line, i) => ((KIND_BRANCH.test(line) || KIND_NAME_BRANCH.test(line)) && !/^\s*(\*|\/\/)/.test(line) && JUSTIFIED[f]?.line !== line.trim() ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('the target kinds', () => {
  it('are branched on in their kind modules only', () => {
    expect(branchesOutsideKindModules()).toEqual([]);
  });

  it('leave only the justified exceptions, each still there (a stale one is removed from the list)', () => {
    for (const [f, { line }] of Object.entries(JUSTIFIED)) {
      expect(fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n').map((l) => l.trim())).toContain(line);
    }
  });

  it('the check sees a branch when there is one', () => {
    expect(KIND_BRANCH.test("const k = fn.kind === 'class' ? a : b;")).toBe(true);
    expect(KIND_BRANCH.test("if (input.fn.kind !== 'class') return;")).toBe(true);
    expect(KIND_BRANCH.test('const k = kindOf(fn);')).toBe(false);
    for (const line of ["if (kind === 'class') {", "t.kind === 'function' ? 1 : 0", "input.kind === 'class'", "'class' === record.kind", 'placementKind != "function"', "targetKind !== `class`"]) {
      expect([line, KIND_NAME_BRANCH.test(line)]).toEqual([line, true]);
    }
    for (const line of ["const k = kindOf(fn);", "GROUND_TRUTH_PLACEMENT[input.kind ?? 'function']", "{ kind: 'class', accepted: true }", "t.kind === kind"]) {
      expect([line, KIND_NAME_BRANCH.test(line)]).toEqual([line, false]);
    }
  });
});

describe('functionWorkflow', () => {
  it('is under 150 lines, its stages in files beside it', () => {
    const text = fs.readFileSync(path.join(ROOT, 'workflows/function.ts'), 'utf8');
    const start = text.indexOf('export async function functionWorkflow(');
    expect(start).toBeGreaterThan(0);
    // The function's body: up to the closing brace at the start of a line.
    const end = text.indexOf('\n}\n', start);
    expect(text.slice(start, end).split('\n').length).toBeLessThan(150);
    expect(text.split('\n').length).toBeLessThan(150);
    for (const stage of ['debug-rounds', 'coverage-rounds', 'strength', 'final-checks', 'solvability']) {
      expect(fs.existsSync(path.join(ROOT, `workflows/${stage}.ts`))).toBe(true);
      expect(text).toContain(`from './${stage}'`);
    }
  });
});
