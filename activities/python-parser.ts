/**
 * The one way this code base gets a tree-sitter parser for Python.
 *
 * tree-sitter's JavaScript wrapper patches its native classes' prototypes when it loads. Loaded a
 * second time in one process against the same native addon (jest gives every test file its own
 * module registry), it wraps its own wrappers and `tree.rootNode` comes back undefined. So the
 * pristine prototypes are saved, on the native addon itself, before the first load and restored
 * before every later one.
 */
import * as path from 'node:path';
import type ParserType from 'tree-sitter';

type Binding = Record<string, unknown> & { __repostPristine?: Map<object, Map<string | symbol, PropertyDescriptor>> };

function patchedObjects(binding: Binding): object[] {
  const out: object[] = [];
  for (const name of ['Tree', 'Parser', 'Query', 'TreeCursor', 'LookaheadIterator']) {
    const cls = binding[name] as { prototype?: object } | undefined;
    if (cls?.prototype) out.push(cls.prototype);
  }
  if (binding.NodeMethods && typeof binding.NodeMethods === 'object') out.push(binding.NodeMethods as object);
  return out;
}

function descriptorsOf(obj: object): Map<string | symbol, PropertyDescriptor> {
  return new Map(Reflect.ownKeys(obj).map((k) => [k, Object.getOwnPropertyDescriptor(obj, k)!]));
}

function loadTreeSitter(): { Parser: typeof ParserType; Python: ParserType.Language } {
  const dir = path.dirname(require.resolve('tree-sitter/package.json'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const binding = require('node-gyp-build')(dir) as Binding;
  if (!binding.__repostPristine) {
    binding.__repostPristine = new Map(patchedObjects(binding).map((o) => [o, descriptorsOf(o)]));
  } else {
    for (const [obj, saved] of binding.__repostPristine) {
      for (const key of Reflect.ownKeys(obj)) if (!saved.has(key)) delete (obj as Record<string | symbol, unknown>)[key];
      for (const [key, desc] of saved) Object.defineProperty(obj, key, desc);
    }
  }
  /* eslint-disable @typescript-eslint/no-require-imports */
  return { Parser: require('tree-sitter') as typeof ParserType, Python: require('tree-sitter-python') as ParserType.Language };
}

const loaded = loadTreeSitter();

export type PythonParser = ParserType;
export type SyntaxNode = ParserType.SyntaxNode;
export type Tree = ParserType.Tree;

/** A new tree-sitter parser set to Python (keep one per module: parsers are reusable). */
export function createPythonParser(): ParserType {
  const parser = new loaded.Parser();
  parser.setLanguage(loaded.Python);
  return parser;
}

/** Parses the whole text: the binding reads source in chunks of `bufferSize`, so it is sized to the text. */
export function parseText(parser: ParserType, text: string): ParserType.Tree {
  return parser.parse(text, undefined, { bufferSize: Math.max(64 * 1024, text.length * 2 + 1024) });
}
