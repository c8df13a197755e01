/**
 * The code cites the design's rules as `docs/architecture.md, invariant N`: every such citation
 * (and every mention of an invariant by number) must name a rule the document has.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const DOC = 'docs/architecture.md';

/** The numbers of the document's invariants: the numbered items of its "Invariants" section. */
function invariantsOfDocument(): Set<number> {
  const text = fs.readFileSync(path.join(ROOT, DOC), 'utf8');
  const section = /^## Invariants\n([\s\S]*?)(?=^## )/m.exec(text);
  if (!section) throw new Error(`${DOC} has no "## Invariants" section`);
  return new Set([...section[1]!.matchAll(/^(\d+)\. \S/gm)].map((m) => Number(m[1])));
}

/** The project's own files that may cite: source, tests, documentation (not node modules, data, fixtures). */
function citingFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!['node_modules', '.git', '.data', '.tools', 'fixtures'].includes(e.name) && !e.name.startsWith('.')) walk(rel);
      } else if (/\.(ts|js|py|md|sh)$/.test(e.name) && rel !== DOC) out.push(rel);
    }
  };
  walk('');
  return out.sort();
}

/** Every mention of an invariant by number in a file: where it is, the numbers, and whether it names the document. */
function mentions(file: string): { where: string; numbers: number[]; cited: boolean }[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/\binvariants?\s+(\d+(?:(?:\s*,\s*|\s+and\s+)\d+)*)/g)].map((m) => {
    const line = text.slice(0, m.index).split('\n').length;
    const before = text.slice(Math.max(0, m.index! - 40), m.index);
    return { where: `${file}:${line}`, numbers: m[1]!.split(/\s*,\s*|\s+and\s+/).map(Number), cited: /docs\/architecture\.md,\s*$/.test(before) };
  });
}

describe('citations of the design', () => {
  const invariants = invariantsOfDocument();
  const all = citingFiles().flatMap(mentions);

  it('are read: the document numbers its invariants, the code cites them', () => {
    expect([...invariants].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect(all.filter((m) => m.cited).length).toBeGreaterThan(10);
  });

  it('each name the document, and an invariant it has', () => {
    expect(all.filter((m) => !m.cited).map((m) => m.where)).toEqual([]);
    expect(all.filter((m) => m.numbers.some((n) => !invariants.has(n))).map((m) => `${m.where}: ${m.numbers.join(', ')}`)).toEqual([]);
  });

  it('never point at a design guide outside the repository', () => {
    const outside = citingFiles().filter((f) => /\bDESIGN invariants?\b/.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(outside).toEqual([]);
  });
});
