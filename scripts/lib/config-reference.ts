/**
 * The configuration reference (docs/config-reference.md), generated from the schema: every key
 * with its type, default, environment variables, whether it belongs to the run or the process, and
 * its description. Keys, types, defaults and variables come from the schema object; descriptions
 * are the doc comments on the schema's keys, read through the `Config` type with the TypeScript
 * compiler (so they stay where the keys are declared, in whichever file that is).
 */
import * as path from 'node:path';
import * as ts from 'typescript';
import { ConfigSchema, configKeys, ENV_ALIASES, type ConfigKey } from '../../temporal.config';

/** The module that exports the `Config` type (the schema's inferred type). */
export const CONFIG_MODULE = path.resolve(__dirname, '../../temporal.config.ts');
export const REFERENCE_PAGE = path.resolve(__dirname, '../../docs/config-reference.md');

/** The doc comment of every key and section of the `Config` type, by dotted path. */
export function schemaDescriptions(configModule = CONFIG_MODULE): Map<string, string> {
  const program = ts.createProgram([configModule], { strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS, esModuleInterop: true, skipLibCheck: true, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(configModule);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  const config = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.name === 'Config');
  if (!config) throw new Error(`${configModule} exports no Config type`);
  const docs = new Map<string, string>();
  const walk = (type: ts.Type, prefix: string, depth: number): void => {
    for (const property of checker.getPropertiesOfType(type)) {
      const key = prefix ? `${prefix}.${property.name}` : property.name;
      docs.set(key, ts.displayPartsToString(property.getDocumentationComment(checker)).replace(/\s+/g, ' ').trim());
      const inner = checker.getTypeOfSymbol(property).getNonNullableType();
      const isRecord = checker.getIndexInfosOfType(inner).length > 0;
      if (depth < 5 && inner.flags & ts.TypeFlags.Object && !checker.isArrayType(inner) && !isRecord) walk(inner, key, depth + 1);
    }
  };
  walk(checker.getDeclaredTypeOfSymbol(config), '', 0);
  return docs;
}

function valueAt(obj: unknown, keyPath: string): unknown {
  return keyPath.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const code = (text: string) => '`' + text.replace(/`/g, "'") + '`';

function typeOf(key: ConfigKey): string {
  if (key.values) return key.values.map((v) => code(v)).join(' \\| ');
  return { string: 'string', number: 'number', boolean: 'boolean', array: 'list (comma-separated)', object: 'object (JSON)' }[key.type];
}

function defaultOf(value: unknown): string {
  if (value === undefined) return 'unset';
  if (Array.isArray(value) && value.length === 0) return 'none';
  return code(Array.isArray(value) ? value.join(',') : typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/** What keeps the page from being complete: keys with no description (their own, or their group's). */
export interface ReferenceProblems {
  undescribed: string[];
}

/** The page's text; keys without a description are listed in `problems` (and shown as such). */
export function renderConfigReference(docs = schemaDescriptions()): { text: string; problems: ReferenceProblems } {
  const defaults = ConfigSchema.parse({});
  const aliases = new Map<string, string[]>();
  for (const [name, p] of Object.entries(ENV_ALIASES)) aliases.set(p, [...(aliases.get(p) ?? []), name]);
  const undescribed: string[] = [];
  const lines = [
    '# Configuration reference',
    '',
    '<!-- Generated from the configuration schema by `npx tsx scripts/config-reference.ts`; do not edit by hand. -->',
    '',
    'Every key of the configuration, as the schema declares it. How the layers combine (defaults, the',
    '`REPOST_CONFIG` file, environment variables, flags, a preset) and which keys a run freezes: [Configuration](configuration.md).',
    'A *run* key is frozen into a run when it starts and applies to every worker serving it; a *process* key',
    'belongs to the process that reads it (where things are, credentials, concurrency).',
  ];
  const keys = configKeys();
  const sections = [...new Set(keys.map((k) => k.path.split('.')[0]!))];
  for (const section of sections) {
    lines.push('', `## ${section}`, '');
    const sectionDoc = docs.get(section);
    if (sectionDoc && keys.some((k) => k.path !== section && k.path.startsWith(`${section}.`))) lines.push(sectionDoc, '');
    lines.push('| key | type | default | environment | scope | description |', '|---|---|---|---|---|---|');
    const groupsShown = new Set<string>();
    for (const key of keys.filter((k) => k.path === section || k.path.startsWith(`${section}.`))) {
      // A nested group's own comment (e.g. `loops.mutation`) is shown once, before its first key.
      const parts = key.path.split('.');
      for (let i = 2; i < parts.length; i++) {
        const group = parts.slice(0, i).join('.');
        const groupDoc = docs.get(group);
        if (groupDoc && !groupsShown.has(group)) {
          groupsShown.add(group);
          lines.push(`| ${code(group + '.*')} | | | | | ${cell(groupDoc)} |`);
        }
      }
      // A key without a comment of its own is described by its group's (`llm.models.*`: each step's model).
      const group = parts.slice(0, -1).join('.');
      const own = docs.get(key.path) || (parts.length > 2 && docs.get(group) ? `one of ${code(group + '.*')}` : '');
      if (!own) undescribed.push(key.path);
      const env = [key.env, ...(aliases.get(key.path) ?? [])].map(code).join(', ');
      lines.push(`| ${code(key.path)} | ${typeOf(key)} | ${cell(defaultOf(valueAt(defaults, key.path)))} | ${env} | ${key.perProcess ? 'process' : 'run'} | ${cell(own || '(no description)')} |`);
    }
  }
  return { text: lines.join('\n') + '\n', problems: { undescribed } };
}
