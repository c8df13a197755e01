import * as fs from 'node:fs';
import { derivedFunctionId, parseEvalDataset, unfence } from '../../../activities/eval/dataset';
import { findDefinition, parsePython } from '../../../activities/eval/function-source';
import { bodyPlaceholder, hasDocstring, promptContext } from '../../../activities/eval/prompt-context';
import { DEMO_DATASET, REPOST_SAMPLE } from '../../support/fixtures';

const repost = parseEvalDataset(fs.readFileSync(REPOST_SAMPLE, 'utf8'));
const demo = parseEvalDataset(fs.readFileSync(DEMO_DATASET, 'utf8'));

describe('reading datasets', () => {
  it("reads RepoST's published format: func_name is the qualified name, ids are derived", () => {
    expect(repost).toHaveLength(40);
    const logger = repost.find((r) => r.idx === '451')!;
    expect(logger).toMatchObject({ qualname: 'Logger.prompt', name: 'prompt', repo: 'Entalpic___entaldocs', path: 'src/entaldocs/logger.py', format: 'repost', requirements: [] });
    expect(logger.functionId).toBe(derivedFunctionId(logger.repo, logger.commit, logger.path, 'Logger.prompt'));
    // The published contexts are fenced; ours are not.
    expect(logger.context.startsWith('## src/entaldocs/logger.py\n')).toBe(true);
    expect(logger.context).not.toContain('```');
    expect(new Set(repost.map((r) => r.functionId)).size).toBe(40);
  });

  it('reads ours: qualname and function id as recorded, packages as pinned requirements', () => {
    expect(demo.map((r) => [r.qualname, r.format])).toEqual([
      ['Interval.merge', 'ours'],
      ['word_frequencies', 'ours'],
      ['slugify', 'ours'],
    ]);
    expect(demo[0]!.functionId).toBe('0c12304634f4f2ba');
    const withPackages = parseEvalDataset(JSON.stringify({ ...JSON.parse(fs.readFileSync(DEMO_DATASET, 'utf8').split('\n')[0]!), packages: [{ name: 'numpy', version: '2.1.0' }] }));
    expect(withPackages[0]!.requirements).toEqual(['numpy==2.1.0']);
  });

  it('names the line of a bad or repeated record', () => {
    const line = fs.readFileSync(DEMO_DATASET, 'utf8').split('\n')[0]!;
    expect(() => parseEvalDataset(`${line}\n{"func_name": "f"}\n`)).toThrow(/dataset line 2: not an evaluation record: .*idx/);
    expect(() => parseEvalDataset(`${line}\nnot json\n`)).toThrow(/dataset line 2: not JSON/);
    expect(() => parseEvalDataset(`${line}\n\n${line}\n`)).toThrow(/dataset line 3: function 0c12304634f4f2ba .* repeats line 1/);
  });

  it('unfences only a whole fenced context', () => {
    expect(unfence('```python\n## a.py\nx = 1\n```\n\n\n')).toBe('## a.py\nx = 1');
    expect(unfence('## a.py\nx = 1\n')).toBe('## a.py\nx = 1');
  });
});

describe('the prompt context', () => {
  const merge = demo[0]!;

  it('keeps the signature and original docstring, removes the body (a method, in its class)', () => {
    expect(promptContext(merge, { mode: 'original' })).toBe(
      [
        '## textkit/ranges.py',
        'class Interval:',
        '    """A closed interval of numbers."""',
        '',
        '    def __init__(self, lo, hi):',
        '        if lo > hi:',
        '            lo, hi = hi, lo',
        '        self.lo = lo',
        '        self.hi = hi',
        '',
        '    def merge(self, other):',
        '        """The smallest interval covering both; they must share a point."""',
        bodyPlaceholder('        '),
      ].join('\n'),
    );
  });

  it('drops the docstring, or puts a generated one in its place', () => {
    const none = promptContext(merge, { mode: 'none' });
    expect(none).not.toContain('share a point');
    expect(none).toContain(`    def merge(self, other):\n${bodyPlaceholder('        ')}`);
    const generated = promptContext(merge, { mode: 'generated', generated: 'Merge two overlapping intervals.\n\nRaises ValueError when they do not overlap;\n  "quotes" and \\ stay literal.' });
    expect(generated).toContain(
      '    def merge(self, other):\n        """Merge two overlapping intervals.\n\n        Raises ValueError when they do not overlap;\n          "quotes" and \\\\ stay literal.\n        """\n' + bodyPlaceholder('        '),
    );
    expect(() => promptContext(merge, { mode: 'generated' })).toThrow(/needs the generated docstring/);
  });

  it('keeps the other files of a cross-file context and edits only the target', () => {
    const slug = demo[2]!;
    const ctx = promptContext(slug, { mode: 'original' });
    expect(ctx).toContain('## textkit/clean.py\nimport re');
    expect(ctx).toContain('return _SPACES.sub(" ", text).strip()');
    expect(ctx).not.toContain('slug = sep.join(kept)');
  });

  it('appends the signature when the context lacks the target', () => {
    const ctx = promptContext({ ...merge, qualname: 'clamp', path: 'util.py', origFunc: 'def clamp(x, lo, hi):\n    """Limit x."""\n    return x\n' }, { mode: 'original' });
    expect(ctx.endsWith(`## util.py\ndef clamp(x, lo, hi):\n    """Limit x."""\n${bodyPlaceholder('    ')}\n`)).toBe(true);
  });

  it('removes the ground truth body from every RepoST sample record', () => {
    for (const r of repost) {
      const ctx = promptContext(r, { mode: 'original' });
      expect({ idx: r.idx, placeholders: ctx.split(bodyPlaceholder('').trim()).length - 1 }).toEqual({ idx: r.idx, placeholders: 1 });
      // The target is still defined where it was, now with only its docstring and the placeholder.
      const own = ctx.slice(ctx.lastIndexOf(`## ${r.path}\n`));
      const def = findDefinition(parsePython(own.slice(own.indexOf('\n') + 1)).rootNode, r.qualname);
      expect({ idx: r.idx, found: def !== undefined }).toEqual({ idx: r.idx, found: true });
      const statements = def!.childForFieldName('body')!.namedChildren.filter((n) => n.type !== 'comment');
      expect({ idx: r.idx, statements: statements.length }).toEqual({ idx: r.idx, statements: hasDocstring(r.origFunc) ? 2 : 1 });
    }
  });
});
