/**
 * The class metrics' cyclomatic complexity against radon's (6.0.1, pinned in .tools/radon by
 * scripts/bootstrap.sh --tests), method by method, on the hand-written classes of the unit tests,
 * the analysis fixtures and the demo repository.
 */
import * as path from 'node:path';
import { RepositoryAnalyzer } from '../../activities/analysis';
import { radonMethods } from '../support/tools';

const ROOT = path.resolve(__dirname, '../..');
const FOLDERS = [
  'test/fixtures/classes',
  'test/fixtures/repos/mlkit',
  'test/fixtures/repos/shop',
  'test/fixtures/repos/webapp',
  'test/fixtures/repos/scripts_repo',
  'test/fixtures/repos/legacy',
  'scripts/demo/example-repo',
];

describe('cyclomatic complexity against radon', () => {
  it.each(FOLDERS)('every method of every class in %s has radon\'s figure', async (folder) => {
    const root = path.join(ROOT, folder);
    const classes = (await RepositoryAnalyzer.open(root)).classes();
    expect(classes.length).toBeGreaterThan(0);
    const ours = new Map<string, number>();
    for (const c of classes) for (const m of c.methods) ours.set(`${c.path}::${c.qualname}.${m.name}@${m.line}`, m.cyclomatic);
    const radon = await radonMethods(root, [...new Set(classes.map((c) => c.path))]);
    expect(radon.errors).toEqual({});
    const listed = new Set(classes.map((c) => `${c.path}::${c.qualname}`));
    const theirs = new Map<string, number>();
    for (const [file, methods] of Object.entries(radon.methods)) {
      for (const m of methods) if (listed.has(`${file}::${m.class}`)) theirs.set(`${file}::${m.class}.${m.method}@${m.line}`, m.complexity);
    }
    expect(Object.fromEntries([...ours].sort())).toEqual(Object.fromEntries([...theirs].sort()));
  });

  it('covers the constructs radon special-cases', async () => {
    // The comparison above means something only if the fixtures hold methods of every kind.
    const classes = (await RepositoryAnalyzer.open(path.join(ROOT, 'test/fixtures/classes'))).classes();
    const figures = classes.flatMap((c) => c.methods.map((m) => m.cyclomatic));
    expect(figures.length).toBeGreaterThanOrEqual(20);
    expect(Math.max(...figures)).toBeGreaterThanOrEqual(10);
  });
});
