/**
 * Whether a script's tests judge the implementation itself rather than its behaviour: they read
 * the target's code object or bytecode (`f.__code__`, `co_code`, `dis`, `marshal`), its source
 * text (`inspect.getsource`, the script's own file), or its identity (`f is g`, `id(f)`, names
 * compared). Such tests fail every faithful reimplementation placed as the new implementation and
 * kill every mutant without checking a single result, so the sanity checks refuse them
 * (`tests_read_implementation`).
 *
 * Only the tests are read: the test functions, the `__main__` block and the script's functions they
 * call, leaving out the code under test (the target, its new implementation and whatever those
 * call), which may use `inspect` or `__name__` for its own purposes. Nothing runs; the syntax tree
 * is tree-sitter's.
 */
import type Parser from 'tree-sitter';

type Node = Parser.SyntaxNode;

/** Attributes that hold a function's code object or a part of one. */
const CODE_ATTRIBUTES = new Set([
  '__code__', 'gi_code', 'cr_code', 'ag_code', 'f_code',
  'co_code', 'co_consts', 'co_names', 'co_varnames', 'co_argcount', 'co_posonlyargcount', 'co_kwonlyargcount', 'co_nlocals',
  'co_stacksize', 'co_flags', 'co_firstlineno', 'co_filename', 'co_name', 'co_qualname', 'co_lnotab', 'co_linetable',
  'co_exceptiontable', 'co_freevars', 'co_cellvars', 'co_positions', 'co_lines',
]);
/** `inspect` functions that read source text. */
const SOURCE_FUNCTIONS = new Set(['getsource', 'getsourcelines', 'getsourcefile', 'getfile', 'findsource', 'getcomments', 'getblock']);
/** Modules every function of which reads code: the disassembler and the code serializer. */
const CODE_MODULES = new Set(['dis', 'marshal']);
/** Attributes naming a function, compared between implementations to tell them apart. */
const NAME_ATTRIBUTES = new Set(['__name__', '__qualname__']);
/** Builtins that give an object's identity. */
const IDENTITY_FUNCTIONS = new Set(['id', 'hash']);
/** The script's own path, as a test would name it to read its source text. */
const OWN_FILE = new Set(['__file__', 'sys.argv[0]']);
const FILE_READERS = new Set(['open', 'Path', 'getline', 'getlines', 'checkcache', 'updatecache']);

export interface ImplementationRead {
  line: number;
  what: string;
}

function unwrap(node: Node): Node {
  let n = node;
  while (n.type === 'parenthesized_expression' && n.namedChildren.length === 1) n = n.namedChildren[0]!;
  return n;
}

function definitionsOf(block: Node | null): Node[] {
  if (!block) return [];
  return block.namedChildren.map((c) => (c.type === 'decorated_definition' ? (c.childForFieldName('definition') ?? c) : c));
}

/** What the script's imports bind: a name for a module (`import dis as d`) or for a module's function. */
function importsOf(root: Node): { modules: Map<string, string>; functions: Map<string, string> } {
  const modules = new Map<string, string>();
  const functions = new Map<string, string>();
  for (const stmt of root.descendantsOfType(['import_statement', 'import_from_statement'])) {
    const names = stmt.childrenForFieldName('name');
    if (stmt.type === 'import_statement') {
      for (const n of names) {
        const dotted = n.type === 'aliased_import' ? n.childForFieldName('name')?.text : n.text;
        const alias = n.type === 'aliased_import' ? n.childForFieldName('alias')?.text : dotted;
        if (dotted && alias) modules.set(alias, dotted);
      }
    } else {
      const module = stmt.childForFieldName('module_name')?.text;
      if (!module) continue;
      for (const n of names) {
        const name = n.type === 'aliased_import' ? n.childForFieldName('name')?.text : n.text;
        const alias = n.type === 'aliased_import' ? n.childForFieldName('alias')?.text : name;
        if (name && alias) functions.set(alias, `${module}.${name}`);
      }
    }
  }
  return { modules, functions };
}

/** The script's top-level functions and the methods of its top-level classes, by simple name. */
function functionsByName(root: Node): Map<string, Node[]> {
  const out = new Map<string, Node[]>();
  const add = (def: Node) => {
    const name = def.childForFieldName('name')?.text;
    if (def.type === 'function_definition' && name) out.set(name, [...(out.get(name) ?? []), def]);
  };
  for (const def of definitionsOf(root)) {
    add(def);
    if (def.type === 'class_definition') for (const m of definitionsOf(def.childForFieldName('body'))) add(m);
  }
  return out;
}

/** Names of the functions a node calls (a name, or an attribute's last part). */
function calledNames(node: Node): string[] {
  return node.descendantsOfType('call').flatMap((call) => {
    const fn = call.childForFieldName('function');
    if (fn?.type === 'identifier') return [fn.text];
    if (fn?.type === 'attribute') return [fn.childForFieldName('attribute')?.text ?? ''];
    return [];
  });
}

/** Every definition reachable from `starts` through calls of the script's own functions. */
function closure(starts: Node[], byName: Map<string, Node[]>, stop: Set<number> = new Set()): Map<number, Node> {
  const seen = new Map<number, Node>();
  const queue = [...starts];
  while (queue.length) {
    const node = queue.pop()!;
    if (seen.has(node.id) || stop.has(node.id)) continue;
    seen.set(node.id, node);
    for (const name of calledNames(node)) for (const def of byName.get(name) ?? []) queue.push(def);
  }
  return seen;
}

/** The last part of a name or attribute (`f`, `obj.f` -> `f`), else undefined. */
function simpleName(node: Node): string | undefined {
  const n = unwrap(node);
  if (n.type === 'identifier') return n.text;
  if (n.type === 'attribute') return n.childForFieldName('attribute')?.text;
  return undefined;
}

function stringValue(node: Node | undefined): string | undefined {
  if (!node || node.type !== 'string') return undefined;
  const content = node.namedChildren.filter((c) => c.type === 'string_content');
  return node.namedChildren.some((c) => c.type === 'interpolation') ? undefined : content.map((c) => c.text).join('');
}

/** Inside a comparison, an assert's test or a condition: where a value decides something. */
function judged(node: Node): boolean {
  for (let n: Node | null = node.parent; n; n = n.parent) {
    if (n.type === 'comparison_operator' || n.type === 'assert_statement') return true;
    if (n.type.endsWith('_statement') || n.type === 'block' || n.type === 'function_definition') return false;
  }
  return false;
}

/**
 * Where the tests read the implementation itself. `implementations` are the names of the code
 * under test (`f`, `f_new_implementation`, or a class and its copy); `tests` the test functions;
 * the `__main__` blocks are read too.
 */
export function implementationReads(root: Node, implementations: string[], tests: Node[], mains: Node[]): ImplementationRead[] {
  const byName = functionsByName(root);
  const classes = new Map(definitionsOf(root).filter((d) => d.type === 'class_definition').map((d) => [d.childForFieldName('name')?.text ?? '', d]));
  const implementationDefs = implementations.flatMap((name) => [...(byName.get(name) ?? []), ...(classes.has(name) ? [classes.get(name)!] : [])]);
  const underTest = closure(implementationDefs, byName);
  const scope = [...closure([...tests, ...mains], byName, new Set(underTest.keys())).values()];
  const { modules, functions } = importsOf(root);
  const implementationNames = new Set(implementations);
  const isImplementation = (node: Node | undefined) => node !== undefined && implementationNames.has(simpleName(node) ?? '');

  const found: ImplementationRead[] = [];
  const seen = new Set<number>();
  const report = (node: Node, what: string) => {
    if (seen.has(node.id)) return;
    seen.add(node.id);
    found.push({ line: node.startPosition.row + 1, what });
  };

  for (const region of scope) {
    for (const attr of region.descendantsOfType('attribute')) {
      const name = attr.childForFieldName('attribute')?.text ?? '';
      const object = attr.childForFieldName('object') ?? undefined;
      if (CODE_ATTRIBUTES.has(name)) report(attr, `reads a code object (${attr.text})`);
      else if (NAME_ATTRIBUTES.has(name) && isImplementation(object) && judged(attr)) report(attr, `compares the implementation's name (${attr.text})`);
    }
    for (const call of region.descendantsOfType('call')) {
      const fn = call.childForFieldName('function');
      const args = (call.childForFieldName('arguments')?.namedChildren ?? []).filter((a) => a.type !== 'comment');
      if (!fn) continue;
      let qualified: string | undefined;
      if (fn.type === 'identifier') qualified = functions.get(fn.text) ?? fn.text;
      else if (fn.type === 'attribute') {
        const object = fn.childForFieldName('object');
        const attribute = fn.childForFieldName('attribute')?.text ?? '';
        if (object?.type === 'identifier') qualified = `${modules.get(object.text) ?? object.text}.${attribute}`;
      }
      const [module, member] = qualified?.includes('.') ? [qualified.slice(0, qualified.lastIndexOf('.')), qualified.slice(qualified.lastIndexOf('.') + 1)] : ['', qualified ?? ''];
      if (CODE_MODULES.has(module)) report(call, `reads bytecode (${fn.text})`);
      else if (module === 'inspect' && SOURCE_FUNCTIONS.has(member)) report(call, `reads source text (${fn.text})`);
      else if (module === '' && IDENTITY_FUNCTIONS.has(member) && args.some((a) => isImplementation(a))) report(call, `reads the implementation's identity (${call.text})`);
      else if (module === '' && member === 'getattr' && args.length >= 2) {
        const attribute = stringValue(args[1]);
        if (attribute !== undefined && CODE_ATTRIBUTES.has(attribute)) report(call, `reads a code object (${call.text})`);
        else if (attribute !== undefined && NAME_ATTRIBUTES.has(attribute) && isImplementation(args[0]) && judged(call)) report(call, `compares the implementation's name (${call.text})`);
      } else if (FILE_READERS.has(member) && args[0] && OWN_FILE.has(args[0].text.replace(/\s+/g, ''))) report(call, `reads the script's own source (${call.text})`);
    }
    for (const cmp of region.descendantsOfType('comparison_operator')) {
      const identity = cmp.children.some((c) => c.type === 'is' || c.type === 'is not');
      if (identity && cmp.namedChildren.some((operand) => isImplementation(operand))) report(cmp, `compares the implementations' identity (${cmp.text})`);
    }
  }
  return found.sort((a, b) => a.line - b.line);
}
