import { functionDefinitionSource, survivorDiffs, survivorSources } from '../../../activities/eval/survivors';
import { survivorsText } from '../../../activities/sandbox/mutation';

const MERGE = [
  '    def merge(self, other):',
  '        """The smallest interval covering both; they must share a point."""',
  '        if self.hi < other.lo or other.hi < self.lo:',
  '            raise ValueError("intervals do not overlap")',
  '        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))',
  '',
].join('\n');

// Two diffs as the harness writes them (difflib, two lines of context, the placed copy's name).
const BOUNDARY = [
  '--- original',
  '+++ mutant',
  '@@ -1,5 +1,5 @@',
  ' def merge_new_implementation(self, other):',
  '     """The smallest interval covering both; they must share a point."""',
  '-    if self.hi < other.lo or other.hi < self.lo:',
  '+    if self.hi < other.lo or other.hi <= self.lo:',
  '         raise ValueError("intervals do not overlap")',
  '     return Interval(min(self.lo, other.lo), max(self.hi, other.hi))',
].join('\n');
const CONSTANT = [
  '--- original',
  '+++ mutant',
  '@@ -2,4 +2,4 @@',
  '     """The smallest interval covering both; they must share a point."""',
  '     if self.hi < other.lo or other.hi < self.lo:',
  '-        raise ValueError("intervals do not overlap")',
  "+        raise ValueError('')",
  '     return Interval(min(self.lo, other.lo), max(self.hi, other.hi))',
].join('\n');

describe("a record's surviving mutants as sources", () => {
  const text = survivorsText('Interval.merge', [
    { operator: 'boundary', line: 3, diff: BOUNDARY },
    { operator: 'constant', line: 4, diff: CONSTANT },
    { operator: 'statement', line: 2, diff: `${CONSTANT.slice(0, 60)}\n[diff cut]` },
  ]);

  it('reads each diff back with its operator and line', () => {
    expect(survivorDiffs(text).map((d) => d.label)).toEqual(['boundary, line 3', 'constant, line 4', 'statement, line 2']);
    expect(survivorDiffs(text)[0]!.diff).toBe(BOUNDARY);
  });

  it('applies each to the ground truth, named as the target; a diff cut for length is left out', () => {
    const sources = survivorSources(MERGE, 'Interval.merge', text);
    expect(sources.map((s) => s.label)).toEqual(['boundary, line 3', 'constant, line 4']);
    expect(sources[0]!.source).toBe(
      ['def merge(self, other):', '    """The smallest interval covering both; they must share a point."""', '    if self.hi < other.lo or other.hi <= self.lo:', '        raise ValueError("intervals do not overlap")', '    return Interval(min(self.lo, other.lo), max(self.hi, other.hi))', ''].join('\n'),
    );
    expect(sources[1]!.source).toContain("raise ValueError('')");
    expect(sources[1]!.source.startsWith('def merge(self, other):')).toBe(true);
  });

  it('gives nothing for a record without survivors, or a diff that does not fit its ground truth', () => {
    expect(survivorSources(MERGE, 'Interval.merge', null)).toEqual([]);
    // A hunk whose counts do not match its lines (a dataset can hold anything).
    const malformed = BOUNDARY.replace('@@ -1,5 +1,5 @@', '@@ -1,4 +1,4 @@');
    expect(survivorSources(MERGE, 'Interval.merge', survivorsText('Interval.merge', [{ operator: 'boundary', line: 3, diff: malformed }, { operator: 'constant', line: 4, diff: CONSTANT }])).map((s) => s.label)).toEqual(['constant, line 4']);
    expect(survivorSources(MERGE, 'Interval.merge', survivorsText('Interval.merge', []))).toEqual([]);
    expect(survivorSources(MERGE.replace('other.hi < self.lo', 'other.hi < self.hi'), 'Interval.merge', survivorsText('Interval.merge', [{ operator: 'boundary', line: 3, diff: BOUNDARY }]))).toEqual([]);
  });
});

describe('a function compared without its docstring', () => {
  it('takes the definition out of its code, dedented, without the docstring', () => {
    const code = `import math\n\nclass Interval:\n${MERGE}\n    def other(self):\n        return 1\n`;
    expect(functionDefinitionSource(code, 'Interval.merge')).toBe(
      ['def merge(self, other):', '    if self.hi < other.lo or other.hi < self.lo:', '        raise ValueError("intervals do not overlap")', '    return Interval(min(self.lo, other.lo), max(self.hi, other.hi))', ''].join('\n'),
    );
    expect(functionDefinitionSource('def f():\n    """Only a docstring."""\n', 'f')).toBe('def f():\n    """Only a docstring."""\n');
    expect(functionDefinitionSource('def g():\n    return 1\n', 'f')).toBeNull();
  });
});
