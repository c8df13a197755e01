/**
 * The extraction must agree with CPython's `ast` module: on every fixture repository, the
 * functions and methods found (path, qualified name, kind, span) and the files that do not
 * parse are exactly what a small `ast` walk finds.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { analyzeRepository, AnalysisOptionsSchema } from '../../../activities/analysis';

const REPOS = path.resolve(__dirname, '../../fixtures/repos');
const WALKER = path.join(__dirname, 'ast_functions.py');
const IGNORE = AnalysisOptionsSchema.parse({}).ignoreDirs;

type Row = [string, string, string, number, number];

function astWalk(root: string): { functions: Row[]; skipped: string[] } {
  const out = execFileSync('python3', [WALKER, root, ...IGNORE], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out) as { functions: Row[]; skipped: string[] };
}

const key = (r: Row) => r.join('|');

describe('agreement with Python ast', () => {
  const repos = fs.readdirSync(REPOS).filter((d) => fs.statSync(path.join(REPOS, d)).isDirectory());

  it('has several fixture repositories', () => {
    expect(repos.length).toBeGreaterThanOrEqual(4);
  });

  it.each(repos)('%s: same functions, methods, spans and unparsable files', async (name) => {
    const root = path.join(REPOS, name);
    const expected = astWalk(root);
    const actual = await analyzeRepository(root);
    const mine = actual.functions.map((f) => key([f.path, f.qualname, f.kind, f.startLine, f.endLine]));
    expect([...new Set(mine)].sort()).toEqual([...new Set(expected.functions.map(key))].sort());
    // Same multiplicity too: shadowed definitions are listed, not merged.
    expect(mine.length).toBe(expected.functions.length);
    expect(actual.skipped.map((s) => s.path).sort()).toEqual([...expected.skipped].sort());
  });
});
