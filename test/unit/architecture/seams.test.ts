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

describe('the target kinds', () => {
  it('are branched on in their kind modules only', () => {
    const files = ['activities', 'workflows', 'scripts', 'workers'].flatMap(sourceFiles).filter((f) => !KIND_MODULES.test(f) && !OTHER_KINDS.test(f));
    expect(files.length).toBeGreaterThan(100);
    const branching = files.flatMap((f) =>
      fs
        .readFileSync(path.join(ROOT, f), 'utf8')
        .split('\n')
        .flatMap((line, i) => (KIND_BRANCH.test(line) && !/^\s*(\*|\/\/)/.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(branching).toEqual([]);
  });

  it('the check sees a branch when there is one', () => {
    expect(KIND_BRANCH.test("const k = fn.kind === 'class' ? a : b;")).toBe(true);
    expect(KIND_BRANCH.test("if (input.fn.kind !== 'class') return;")).toBe(true);
    expect(KIND_BRANCH.test('const k = kindOf(fn);')).toBe(false);
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
