/**
 * The context closure (closure.ts, dependencies.ts): on small repositories written to a
 * temporary folder, the context carries what its own code names (bases, annotations, aliases,
 * helpers of helpers), within the depth and the token budget, once each; dynamic lookups are
 * reported and what they can reach by name is included; `unsupplied` lists what is left out.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RepositoryAnalyzer, type AnalysisOptionsInput, type FunctionAnalysis } from '../../../activities/analysis';
import { DatasetRecordSchema } from '../../../activities/store/records';

const dirs: string[] = [];

async function repo(files: Record<string, string>, options: AnalysisOptionsInput = {}): Promise<RepositoryAnalyzer> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'closure-'));
  dirs.push(root);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return RepositoryAnalyzer.open(root, options);
}

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const lines = (...l: string[]) => `${l.join('\n')}\n`;
const deps = (a: FunctionAnalysis) => a.dependencies.map((d) => `${d.path}::${d.qualname}@${d.distance}`);
const count = (text: string, needle: string) => text.split(needle).length - 1;

const TYPED = {
  'app/__init__.py': '',
  'app/base.py': lines('class Handler:', '    """Handles one message."""', '', '    def __init__(self, name):', '        self.name = name'),
  'app/messages.py': lines(
    'from __future__ import annotations',
    'from typing import TypeVar, Union',
    '',
    'class Message:',
    '    text: str = ""',
    '',
    'class Slot:',
    '    pass',
    '',
    'MessageT = TypeVar("MessageT", bound="Message")',
    'TrimResult = Union["Message", None]',
  ),
  'app/agent.py': lines('class Agent:', '    model: str = "m"'),
  'app/run.py': lines(
    'from __future__ import annotations',
    'from typing import TYPE_CHECKING',
    'from app.base import Handler',
    'from app.messages import MessageT, TrimResult',
    'if TYPE_CHECKING:',
    '    from app.agent import Agent',
    '    from app.messages import Slot',
    '',
    'def deepest(x):',
    '    return x * 2',
    '',
    'def inner(x):',
    '    return deepest(x) + 1',
    '',
    'def outer(x):',
    '    return inner(x)',
    '',
    'class Echo(Handler):',
    '    def reply(self, m: MessageT, who: "Agent", slot: Slot | None = None) -> TrimResult:',
    '        return outer(m)',
  ),
};

describe('the context closure', () => {
  it('follows a base class in another module, aliases and TypeVars named by postponed and string annotations, and helpers of helpers', async () => {
    const a = (await repo(TYPED)).analyze('app/run.py', 'Echo.reply');
    expect(deps(a)).toEqual(
      expect.arrayContaining([
        'app/run.py::Echo@1',
        'app/run.py::outer@1',
        'app/messages.py::MessageT@1',
        'app/messages.py::TrimResult@1',
        'app/messages.py::Slot@1',
        'app/agent.py::Agent@1',
        'app/base.py::Handler@2',
        'app/base.py::Handler.__init__@2',
        'app/run.py::inner@2',
        'app/messages.py::Message@2',
        'app/run.py::deepest@3',
      ]),
    );
    for (const name of ['class Handler', 'class Message', 'class Slot', 'MessageT = TypeVar', 'TrimResult = Union', 'class Agent', 'def deepest']) expect(a.context).toContain(name);
    expect(a.unsupplied).toEqual([]);
    expect(a.truncated).toEqual([]);
  });

  it('without the context closure the same context misses what its annotations name, and says so', async () => {
    const a = (await repo(TYPED, { contextClosure: false })).analyze('app/run.py', 'Echo.reply');
    expect(a.context).not.toContain('class Agent');
    expect(a.unsupplied).toEqual(['app/agent.py::Agent', 'app/messages.py::MessageT', 'app/messages.py::Slot', 'app/messages.py::TrimResult']);
  });

  it('stops at the configured depth and lists what lies beyond as left out for depth', async () => {
    const a = (await repo(TYPED, { closureDepth: 2 })).analyze('app/run.py', 'Echo.reply');
    expect(deps(a)).toContain('app/run.py::inner@2');
    expect(deps(a).some((d) => d.startsWith('app/run.py::deepest'))).toBe(false);
    expect(a.truncated).toEqual([{ path: 'app/run.py', qualname: 'deepest', reason: 'depth' }]);
    expect(a.context).not.toContain('def deepest');
    expect(a.unsupplied).toEqual(['app/run.py::deepest']);
  });

  it('cuts for the token budget farthest first and lists the cut as left out for budget', async () => {
    const big = lines('def far(x):', ...Array.from({ length: 60 }, (_, i) => `    x = x + ${i}  # a long line that costs tokens in the context text`), '    return x');
    const files = {
      'lib/__init__.py': '',
      'lib/far.py': big,
      'lib/near.py': lines('from lib.far import far', '', 'def near(x):', '    return far(x)'),
      'lib/top.py': lines('from lib.near import near', '', 'def top(x):', '    return near(x) + 1'),
    };
    const all = (await repo(files)).analyze('lib/top.py', 'top');
    expect(all.context).toContain('def far');
    const cut = (await repo(files, { contextTokenBudget: 120 })).analyze('lib/top.py', 'top');
    expect(cut.context).toContain('def near');
    expect(cut.context).not.toContain('def far');
    expect(cut.truncated).toEqual([{ path: 'lib/far.py', qualname: 'far', reason: 'budget' }]);
    expect(cut.unsupplied).toEqual(['lib/far.py::far']);
  });

  it('shows a definition once: inside a TYPE_CHECKING import block, and when two files hold the same copy', async () => {
    const make = lines('def make_var(name, **kwargs):', '    """Makes a variable."""', '    return (name, kwargs)');
    const files = {
        'pkg/__init__.py': '',
        'pkg/typing_utils.py': lines(
          'from typing import TYPE_CHECKING',
          'if TYPE_CHECKING:',
          '    from typing import TypeVar',
          'else:',
          '    from typing import TypeVar as Original',
          '',
          ...make.trimEnd().split('\n').map((l) => (l ? `    ${l}` : l)),
          '',
          '    TypeVar = make_var',
          '',
          'T = TypeVar("T")',
        ),
        'pkg/copy_a.py': make,
        'pkg/copy_b.py': make,
        'pkg/use.py': lines('from pkg.typing_utils import T, make_var', 'from pkg import copy_a, copy_b', '', 'def use(x: T):', '    return make_var(x), copy_a.make_var(x), copy_b.make_var(x)'),
    };
    const a = (await repo(files)).analyze('pkg/use.py', 'use');
    expect(count(a.context, 'def make_var')).toBe(2);
    expect(count(a.context, '"""Makes a variable."""')).toBe(2);
    // The block's own copy (it differs by its indentation), and one of the two identical files.
    expect(a.context).toContain('## pkg/typing_utils.py');
    expect(count(a.context, 'if TYPE_CHECKING:')).toBe(1);
    // Without the dedupe (only to measure it): the block's definition shown again after it, and both copies.
    const plain = (await repo(files, { contextDedupe: false })).analyze('pkg/use.py', 'use');
    expect(count(plain.context, 'def make_var')).toBe(4);
    expect(count(plain.context, 'if TYPE_CHECKING:')).toBe(1);
    expect(plain.context.length).toBeGreaterThan(a.context.length);
    expect(plain.dependencies).toEqual(a.dependencies);
  });
});

describe('dynamic lookups', () => {
  const RUNNER = {
    'runner/__init__.py': '',
    'runner/plugins.py': lines('def plugin_csv(x):', '    return x', '', 'def plugin_json(x):', '    return x', '', 'def unrelated():', '    return 0'),
    'runner/core.py': lines(
      'import importlib',
      'from runner import plugins',
      '',
      'def tool_upper(s):',
      '    return s.upper()',
      '',
      'def tool_lower(s):',
      '    return s.lower()',
      '',
      'def shout(s):',
      '    return s + "!"',
      '',
      'def whisper(s):',
      '    return s + "."',
      '',
      'class CodeRunner:',
      '    def __init__(self):',
      '        self.table = {"shout": shout, "whisper": whisper}',
      '',
      '    def _run_python(self, code):',
      '        return code',
      '',
      '    def _run_shell(self, code):',
      '        return code',
      '',
      '    def helper(self):',
      '        return 1',
      '',
      '    def run(self, lang, code):',
      '        handler = getattr(self, f"_run_{lang}")',
      '        tool = globals()["tool_" + lang]',
      '        plugin = getattr(plugins, "plugin_" + lang)',
      '        mod = importlib.import_module("runner." + lang)',
      '        return handler(code), tool(code), plugin(code), self.table[lang](code), mod',
    ),
  };

  it('reports each lookup with where it is, and includes what a name prefix can reach', async () => {
    const a = (await repo(RUNNER)).analyze('runner/core.py', 'CodeRunner.run');
    const byKind = Object.fromEntries(a.dynamic.map((d) => [d.kind + (d.prefix ? `:${d.prefix}` : ''), d]));
    expect(byKind['getattr:_run_']).toMatchObject({ path: 'runner/core.py', line: 30, reaches: ['CodeRunner._run_python', 'CodeRunner._run_shell'] });
    expect(byKind['globals:tool_']).toMatchObject({ line: 31, reaches: ['tool_upper', 'tool_lower'] });
    expect(byKind['getattr:plugin_']).toMatchObject({ line: 32, reaches: ['plugin_csv', 'plugin_json'] });
    expect(byKind['import:runner.']).toMatchObject({ line: 33, reaches: [] });
    expect(byKind['table']).toMatchObject({ line: 18, reaches: ['shout', 'whisper'] });
    for (const name of ['def _run_python', 'def _run_shell', 'def tool_upper', 'def tool_lower', 'def plugin_csv', 'def plugin_json', 'def shout', 'def whisper']) expect(a.context).toContain(name);
    expect(a.context).not.toContain('def helper');
    expect(a.context).not.toContain('def unrelated');
  });

  it('reports lookups without a prefix and reaches nothing by them', async () => {
    const a = (await repo({ 'm.py': lines('class C:', '    def a(self):', '        return 1', '', '    def go(self, name):', '        return getattr(self, name)()') })).analyze('m.py', 'C.go');
    expect(a.dynamic).toEqual([{ kind: 'getattr', path: 'm.py', line: 6, code: 'getattr(self, name)', prefix: '', reaches: [] }]);
    expect(a.context).not.toContain('def a');
    expect(a.unsupplied).toEqual(['getattr(self, name) (dynamic, m.py:6)']);
  });
});

describe('the record of what the context could not supply', () => {
  const old = JSON.parse(fs.readFileSync(path.join(__dirname, '../../fixtures/demo-dataset.jsonl'), 'utf8').split('\n')[0]!) as Record<string, unknown>;

  it('loads records written before the field existed, and keeps the field when present', () => {
    expect('context_unsupplied' in old).toBe(false);
    expect(DatasetRecordSchema.parse(old).context_unsupplied).toBeUndefined();
    expect(DatasetRecordSchema.parse({ ...old, context_unsupplied: ['app/run.py::deepest'] }).context_unsupplied).toEqual(['app/run.py::deepest']);
    expect(() => DatasetRecordSchema.parse({ ...old, context_unsupplied: 'deepest' })).toThrow();
  });
});
