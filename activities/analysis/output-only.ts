/**
 * Targets whose only observable effect is output the tests may not compare: a function (or every
 * method of a class but its constructor) that prints, logs or warns and otherwise computes only
 * local values, returns nothing (or `None`), raises nothing and changes no state. The tests prompt
 * forbids comparing printed text, log records and warnings, so no allowed test can tell a wrong
 * implementation of such a target apart; it is dropped before any LLM call (rule `output-only`).
 *
 * The decision is conservative: a target is output-only only when every call in its body is an
 * output call or a call known to change nothing (`str`, `len`, `"...".format`, ...). Any other
 * call, an assignment to an attribute, a subscript or a global, a `del`, `yield`, `await` or
 * `raise`, or a return of a value keeps it, since it may have an effect the tests can see.
 */
import type { SyntaxNode } from './parser';

/** print(...), sys.stdout.write(...), logger.info(...), logging.warning(...), warnings.warn(...), pprint(...). */
const OUTPUT_CALLEE = [
  /^print$/,
  /^(pprint\.)?pprint$/,
  /^(sys\.)?(stdout|stderr)\.(write|flush)$/,
  /^([A-Za-z_]\w*\.)*(logger|logging|log|_logger|_log|LOGGER|LOG|logs)\.(debug|info|warning|warn|error|exception|critical|fatal|log)$/,
  /^warnings\.warn$/,
];

/** Builtins that compute a value and change nothing. */
const PURE_FUNCTIONS = new Set(['str', 'repr', 'len', 'format', 'int', 'float', 'bool', 'round', 'abs', 'min', 'max', 'sum', 'sorted', 'type', 'isinstance', 'tuple', 'list', 'dict', 'set', 'enumerate', 'range', 'zip', 'id', 'hash', 'ascii', 'chr', 'ord', 'hex']);
/** Methods of strings and mappings that compute a value and change nothing. */
const PURE_METHODS = new Set(['format', 'join', 'upper', 'lower', 'strip', 'lstrip', 'rstrip', 'title', 'capitalize', 'split', 'replace', 'startswith', 'endswith', 'ljust', 'rjust', 'center', 'zfill', 'items', 'keys', 'values', 'get', 'count', 'isoformat', 'strftime']);

/** Statements and expressions that are an effect a test could observe, or may be one. */
const EFFECT_TYPES = new Set(['raise_statement', 'yield', 'await', 'global_statement', 'nonlocal_statement', 'delete_statement', 'exec_statement', 'lambda', 'function_definition', 'class_definition', 'decorated_definition']);

function isOutputCallee(text: string): boolean {
  const t = text.replace(/\s+/g, '');
  return OUTPUT_CALLEE.some((re) => re.test(t));
}

function isPureCallee(fn: SyntaxNode): boolean {
  if (fn.type === 'identifier') return PURE_FUNCTIONS.has(fn.text);
  if (fn.type === 'attribute') return PURE_METHODS.has(fn.childForFieldName('attribute')?.text ?? '');
  return false;
}

/** A target of an assignment that binds local names only (`x`, `a, b`, `(a, b)`, `[a, *b]`). */
function bindsLocalsOnly(node: SyntaxNode): boolean {
  switch (node.type) {
    case 'identifier':
      return true;
    case 'pattern_list':
    case 'tuple_pattern':
    case 'list_pattern':
    case 'tuple':
    case 'list':
    case 'parenthesized_expression':
      return node.namedChildren.every(bindsLocalsOnly);
    case 'list_splat_pattern':
      return node.namedChildren.every(bindsLocalsOnly);
    default:
      return false;
  }
}

/**
 * Whether a function's body (the `function_definition` node) has output as its only effect. A
 * body with no output call at all is not output-only (it is empty or trivial, other rules' case).
 */
export function isOutputOnlyFunction(def: SyntaxNode): boolean {
  const body = def.childForFieldName('body');
  if (!body) return false;
  let outputs = 0;
  const stack: SyntaxNode[] = [...body.namedChildren];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (EFFECT_TYPES.has(node.type)) return false;
    if (node.type === 'return_statement') {
      const value = node.namedChildren[0];
      if (value && !(value.type === 'none' || value.text === 'None')) return false;
      continue;
    }
    if (node.type === 'assignment' || node.type === 'augmented_assignment') {
      const left = node.childForFieldName('left');
      if (!left || !bindsLocalsOnly(left)) return false;
    }
    if (node.type === 'for_statement') {
      const left = node.childForFieldName('left');
      if (left && !bindsLocalsOnly(left)) return false;
    }
    if (node.type === 'call') {
      const fn = node.childForFieldName('function');
      if (!fn) return false;
      if (isOutputCallee(fn.text)) outputs += 1;
      else if (!isPureCallee(fn)) return false;
    }
    stack.push(...node.namedChildren);
  }
  return outputs > 0;
}

/**
 * Whether a class's only effect is output: it has methods besides its constructor, and each of
 * them is output-only (the constructor's state alone is no behaviour worth an environment).
 * `methodIsOutputOnly` holds one entry per method, `methodNames` their names.
 */
export function isOutputOnlyClass(methodNames: readonly string[], methodIsOutputOnly: readonly boolean[]): boolean {
  const others = methodNames.map((name, i) => ({ name, outputOnly: methodIsOutputOnly[i] ?? false })).filter((m) => m.name !== '__init__' && m.name !== '__new__');
  return others.length > 0 && others.every((m) => m.outputOnly);
}
