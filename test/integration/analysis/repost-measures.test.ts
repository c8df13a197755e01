/**
 * What the `repost` preset's rules read of a function (statements, docstring, returns, names and
 * constants, code lines as `ast.unparse` writes them) agrees with Python's own `ast`, on every
 * fixture repository (test/integration/analysis/repost_measures.py does the Python side).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AnalysisOptionsSchema, RepositoryAnalyzer } from '../../../activities/analysis';
import { repostMeasures } from '../../../activities/analysis/repost-rules';

const REPOS = path.resolve(__dirname, '../../fixtures/repos');
const MEASURES = path.join(__dirname, 'repost_measures.py');
const IGNORE = AnalysisOptionsSchema.parse({}).ignoreDirs;

type PythonRow = [string, string, number, string | null, number, number, string[], number];

describe("what the preset's rules read agrees with Python's ast", () => {
  const repos = fs.readdirSync(REPOS).filter((d) => fs.statSync(path.join(REPOS, d)).isDirectory());
  it.each(repos)('%s: statements, docstring, returns, names and constants, unparsed code lines', async (name) => {
    const root = path.join(REPOS, name);
    const expected = JSON.parse(execFileSync('python3', [MEASURES, root, ...IGNORE], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000 })) as PythonRow[];
    const analyzer = await RepositoryAnalyzer.open(root, {});
    const mine = analyzer.repo.functions().map((f): PythonRow => {
      const m = repostMeasures(f.node);
      return [f.path, f.qualname, m.statements, m.docstring, m.directReturns, m.constantReturns, [...m.namesAndConstants].sort(), m.codeLines];
    });
    const byKey = (rows: PythonRow[]) => [...rows].sort((a, b) => `${a[0]}::${a[1]}`.localeCompare(`${b[0]}::${b[1]}`));
    expect(mine.length).toBeGreaterThan(0);
    expect(byKey(mine)).toEqual(byKey(expected));
  });
});
