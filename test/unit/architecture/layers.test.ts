/**
 * The layers point one way, read statically from the import graph of the source files (no module
 * is loaded): scripts and workers over workflows over activities over domain folders over
 * contracts, and the store knowing nothing of the steps that use it (docs/architecture.md,
 * "Where a change goes").
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const SOURCE_DIRS = ['activities', 'workflows', 'workers', 'scripts', 'sandbox-image'];

interface Import {
  from: string;
  to: string;
  /** `import type` / `export type`: erased at compile time. */
  typeOnly: boolean;
}

function sourceFiles(): string[] {
  const out: string[] = ['temporal.config.ts'];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts')) out.push(rel);
    }
  };
  for (const d of SOURCE_DIRS) walk(d);
  return out.sort();
}

/** A relative specifier as a project file (`x` -> `x.ts` or `x/index.ts`); null for a package or a node module. */
function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base]) if (fs.existsSync(path.join(ROOT, candidate)) && fs.statSync(path.join(ROOT, candidate)).isFile()) return candidate;
  throw new Error(`${from}: cannot resolve ${spec}`);
}

/** `{ type A, type B }`: every name imported is a type. */
function onlyTypes(clause: string): boolean {
  const braces = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!braces) return false;
  const names = braces[1]!.split(',').map((n) => n.trim()).filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
}

/** Every import of a file: `import ... from`, `export ... from`, `import x = require()`, `require()`, `import()`. */
function importsOf(file: string): Import[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const out: Import[] = [];
  const statement = /^\s*(?:import|export)\s+(type\s+)?([^'";]*?)\s*\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;
  for (const m of text.matchAll(statement)) {
    const to = resolve(file, m[3] ?? m[4]!);
    if (to) out.push({ from: file, to, typeOnly: Boolean(m[1]) || onlyTypes(m[2] ?? '') });
  }
  for (const m of text.matchAll(/(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    const to = resolve(file, m[1]!);
    if (to) out.push({ from: file, to, typeOnly: false });
  }
  return out;
}

const files = sourceFiles();
const graph = files.flatMap(importsOf);
const edges = (test: (i: Import) => boolean) => graph.filter(test).map((i) => `${i.from} -> ${i.to}`);

const inStore = (f: string) => f.startsWith('activities/store/');
const inConfig = (f: string) => f.startsWith('activities/config/');
const isActivityFile = (f: string) => /^activities\/[^/]+-activities\.ts$/.test(f);
const isScript = (f: string) => /^scripts\/[^/]+\.ts$/.test(f) || f.startsWith('scripts/bench/');
const inDomainFolder = (f: string) => /^activities\/[^/]+\//.test(f);

/**
 * The domain folders, top to bottom: a folder imports only folders below it (the target kinds
 * use everything a step needs; the store, then the configuration, which everything reads, and under
 * it the analysis, whose options' schema the configuration takes). A new folder takes its place here.
 */
const DOMAIN_ORDER = ['targets', 'benchmark', 'export', 'serve', 'eval', 'classes', 'report', 'dataset', 'tables', 'sources', 'llm', 'sandbox', 'store', 'config', 'analysis'];
const domainOf = (f: string) => /^activities\/([^/]+)\//.exec(f)?.[1] ?? null;
/** An import from one domain folder to another at its level or above it. */
function againstDomainOrder(i: Pick<Import, 'from' | 'to'>): boolean {
  const from = domainOf(i.from);
  const to = domainOf(i.to);
  if (from === null || to === null || from === to) return false;
  return DOMAIN_ORDER.indexOf(to) <= DOMAIN_ORDER.indexOf(from);
}

describe('the import graph', () => {
  it('is read: every source file, their relative imports resolved', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(graph.length).toBeGreaterThan(400);
    // The reader sees what it must: an import type, a re-export, an import of a folder.
    expect(graph).toContainEqual({ from: 'workflows/function.ts', to: 'activities/contracts.ts', typeOnly: true });
    expect(graph).toContainEqual(expect.objectContaining({ from: 'activities/sources/index.ts', to: 'activities/sources/github.ts' }));
    expect(graph).toContainEqual(expect.objectContaining({ from: 'scripts/lib/workers.ts', to: 'activities/index.ts' }));
  });

  it('has no import from the store to the steps above it', () => {
    const allowed = (to: string) => inStore(to) || to === 'activities/contracts.ts' || to === 'temporal.config.ts' || inConfig(to);
    expect(edges((i) => inStore(i.from) && !allowed(i.to))).toEqual([]);
  });

  it('has no activity file importing another', () => {
    expect(edges((i) => isActivityFile(i.from) && isActivityFile(i.to))).toEqual([]);
  });

  it('has no script importing workers/ or another script (scripts/lib is their shared library)', () => {
    expect(edges((i) => i.from.startsWith('scripts/') && i.to.startsWith('workers/'))).toEqual([]);
    expect(edges((i) => i.from.startsWith('scripts/') && isScript(i.to))).toEqual([]);
  });

  it('points one way: activities never import workflows, workers or scripts; workflows import activities for types only', () => {
    expect(edges((i) => i.from.startsWith('activities/') && /^(workflows|workers|scripts)\//.test(i.to))).toEqual([]);
    expect(edges((i) => i.from.startsWith('workflows/') && i.to.startsWith('activities/') && !i.typeOnly)).toEqual([]);
    expect(edges((i) => i.from.startsWith('workflows/') && /^(workers|scripts)\//.test(i.to))).toEqual([]);
  });

  it('keeps domain folders under the activity files, and the contracts and the configuration at the bottom', () => {
    expect(edges((i) => inDomainFolder(i.from) && (isActivityFile(i.to) || i.to === 'activities/index.ts'))).toEqual([]);
    expect(edges((i) => i.from === 'activities/contracts.ts')).toEqual([]);
    // The top-level temporal.config.ts is the configuration folder's face. The configuration takes
    // the analysis options' schema from a module of shapes, and the selection presets' numbers and
    // configuration layer from a module of numbers; neither imports anything of the factory but the other.
    expect(edges((i) => i.from === 'temporal.config.ts')).toEqual(['temporal.config.ts -> activities/config/index.ts']);
    expect(edges((i) => inConfig(i.from) && !inConfig(i.to))).toEqual(['activities/config/loader.ts -> activities/analysis/presets.ts', 'activities/config/sections/analysis.ts -> activities/analysis/types.ts']);
    expect(edges((i) => i.from === 'activities/analysis/types.ts')).toEqual(['activities/analysis/types.ts -> activities/analysis/presets.ts']);
    expect(edges((i) => i.from === 'activities/analysis/presets.ts')).toEqual([]);
  });

  it('has domain folders importing one way, down DOMAIN_ORDER (type imports included)', () => {
    const folders = fs.readdirSync(path.join(ROOT, 'activities'), { withFileTypes: true }).filter((e) => e.isDirectory() && fs.readdirSync(path.join(ROOT, 'activities', e.name)).some((n) => n.endsWith('.ts'))).map((e) => e.name);
    expect(folders.filter((f) => !DOMAIN_ORDER.includes(f))).toEqual([]);
    expect(edges(againstDomainOrder)).toEqual([]);
    // The rule sees an import against the order, and one along it.
    expect(againstDomainOrder({ from: 'activities/classes/record.ts', to: 'activities/export/columns.ts' })).toBe(true);
    expect(againstDomainOrder({ from: 'activities/export/class-columns.ts', to: 'activities/classes/metrics.ts' })).toBe(false);
    expect(againstDomainOrder({ from: 'activities/export/a.ts', to: 'activities/export/b.ts' })).toBe(false);
  });

  it('runs every command through the one runner (scripts/lib/cli.ts)', () => {
    const commands = files.filter((f) => isScript(f) || f.startsWith('workers/'));
    expect(commands.filter((f) => !/\brunCommand\(/.test(fs.readFileSync(path.join(ROOT, f), 'utf8')))).toEqual([]);
  });
});
