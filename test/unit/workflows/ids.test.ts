import {
  MAX_DETAILS_BYTES,
  MAX_KEYWORD_BYTES,
  MAX_SUMMARY_BYTES,
  MAX_WORKFLOW_ID_BYTES,
  boundedKeyword,
  boundedSummary,
  clipUtf8,
  evalFunctionWorkflowId,
  functionWorkflowId,
  shortHash,
  utf8Length,
} from '../../../workflows/ids';
import { targetDetails } from '../../../workflows/target-kinds';

const fn = (repoId: string, qualname: string, functionId: string) => ({ repoId, qualname, functionId });

describe('workflow ids from outside data', () => {
  it('show the repository and the qualified name, and end with the function id', () => {
    expect(functionWorkflowId('demo-1', fn('acme/tools', 'Interval.merge', '0123456789abcdef'))).toBe('demo-1/fn/acme/tools/Interval.merge/0123456789abcdef');
    expect(evalFunctionWorkflowId('eval-1', 'eval', { repo: 'scripted/numbers', qualname: 'clamp', functionId: 'fedcba9876543210' })).toBe('eval-1/eval/scripted/numbers/clamp/fedcba9876543210');
  });

  it('are bounded whatever the length of the names, and stay readable', () => {
    const long = fn(`local/${'r'.repeat(3000)}`, `${'Outer.'.repeat(500)}method`, '0123456789abcdef');
    const id = functionWorkflowId('run-x', long);
    expect(utf8Length(id)).toBeLessThanOrEqual(MAX_WORKFLOW_ID_BYTES);
    expect(id.startsWith('run-x/fn/local/rrrr')).toBe(true);
    expect(id).toContain('Outer.Outer.');
    expect(id.endsWith('/0123456789abcdef')).toBe(true);
    // Multi-byte names are cut on whole characters.
    const wide = functionWorkflowId('run-x', fn('ü'.repeat(2000), '名前'.repeat(2000), 'abc'));
    expect(utf8Length(wide)).toBeLessThanOrEqual(MAX_WORKFLOW_ID_BYTES);
    expect(wide).not.toMatch(/\uFFFD/);
    // A dataset's 3,000-character function id is replaced by its hash.
    const item = { repo: 'x'.repeat(3000), qualname: 'f'.repeat(3000), functionId: 'i'.repeat(3000) };
    const evalId = evalFunctionWorkflowId('eval-1', 'eval', item);
    expect(utf8Length(evalId)).toBeLessThanOrEqual(MAX_WORKFLOW_ID_BYTES);
    expect(evalId).toMatch(/\/~[0-9a-f]{16}$/);
  });

  it('are unique when the readable parts are cut alike, and when function ids differ only past the cut', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 300; i++) {
      ids.add(evalFunctionWorkflowId('r', 'eval', { repo: 'x'.repeat(3000), qualname: 'f'.repeat(3000), functionId: `${'i'.repeat(3000)}${i}` }));
      ids.add(evalFunctionWorkflowId('r', 'eval', { repo: 'x'.repeat(3000), qualname: 'f'.repeat(3000), functionId: `plain-${i}` }));
    }
    expect(ids.size).toBe(600);
    // A plain id never meets a hashed one: `~` marks the hash.
    const hashed = evalFunctionWorkflowId('r', 'eval', { repo: 'a', qualname: 'f', functionId: 'a/b' });
    const plain = evalFunctionWorkflowId('r', 'eval', { repo: 'a', qualname: 'f', functionId: shortHash('a/b') });
    expect(hashed).not.toBe(plain);
  });

  it('are deterministic: the same function gets the same id on every call', () => {
    const f = fn('ácme/tööls', 'Klasse.método', 'ff00ff00ff00ff00');
    expect(functionWorkflowId('run', f)).toBe(functionWorkflowId('run', { ...f }));
    expect(shortHash('x'.repeat(5000))).toBe(shortHash('x'.repeat(5000)));
    // FNV-1a 64 of known inputs (its published test vectors).
    expect(shortHash('')).toBe('cbf29ce484222325');
    expect(shortHash('a')).toBe('af63dc4c8601ec8c');
    expect(shortHash('foobar')).toBe('85944171f73967e8');
  });

  it('keep control characters and white space out', () => {
    const id = functionWorkflowId('run', fn('evil\nrepo', 'f\u0000\u202e x', '0123456789abcdef'));
    expect(id).toBe('run/fn/evil_repo/f___x/0123456789abcdef');
  });
});

describe('search-attribute values and UI texts', () => {
  it('keep short printable values as they are, so exact filters find them', () => {
    expect(boundedKeyword('acme/tools')).toBe('acme/tools');
    expect(boundedKeyword('pkg/my module.py::f')).toBe('pkg/my module.py::f');
  });

  it('bound long values to a readable head and a hash of the whole', () => {
    const path = `${'deep/'.repeat(600)}m.py::f`;
    const v = boundedKeyword(path);
    expect(utf8Length(v)).toBeLessThanOrEqual(MAX_KEYWORD_BYTES);
    expect(v.startsWith('deep/deep/')).toBe(true);
    expect(v.endsWith(`~${shortHash(path)}`)).toBe(true);
    expect(boundedKeyword(`${path}x`)).not.toBe(v);
    expect(boundedKeyword('a\u0000b')).toMatch(/^a_b…~[0-9a-f]{16}$/);
  });

  it('bound a summary', () => {
    expect(utf8Length(boundedSummary('é'.repeat(3000)))).toBeLessThanOrEqual(MAX_SUMMARY_BYTES);
    expect(boundedSummary('acme/tools pkg/m.py::f')).toBe('acme/tools pkg/m.py::f');
  });

  it('clip UTF-8 on whole characters', () => {
    expect(clipUtf8('aé😀b', 3)).toBe('aé');
    expect(clipUtf8('aé😀b', 6)).toBe('aé');
    expect(clipUtf8('aé😀b', 7)).toBe('aé😀');
    expect(utf8Length('aé😀b')).toBe(8);
  });

  it("current details name the target's kind: a class environment's workflow says class, a function's function", () => {
    const target = { repoId: 'acme/tools', path: 'calc.py', qualname: 'Interval', split: 'train' };
    const cls = targetDetails({ ...target, kind: 'class' }, 'tests', 'writing equivalence tests');
    expect(cls).toBe('**tests** writing equivalence tests\n\nclass acme/tools `calc.py::Interval` (train)');
    expect(targetDetails({ ...target, qualname: 'Interval.merge' }, 'tests', 'x')).toBe('**tests** x\n\nfunction acme/tools `calc.py::Interval.merge` (train)');
    expect(targetDetails({ ...target, kind: 'function' }, 'tests', 'x')).toContain('\n\nfunction ');
    // Outside data (a qualified name, a model's failure text) stays within the UI's bound.
    expect(utf8Length(targetDetails({ ...target, kind: 'class', qualname: 'K'.repeat(100_000) }, 'debug', 'é'.repeat(100_000)))).toBeLessThanOrEqual(MAX_DETAILS_BYTES);
  });
});
