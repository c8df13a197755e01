/**
 * The store in the local data directory (the embedded default). Every process on this machine
 * that uses the same data directory shares it:
 *
 *   artifacts/<hh>/<hash>                      content-addressed artifacts
 *   snapshots/<owner>/<name>/<commit>/tree     repository snapshots (extracted trees; ids that are
 *                                              not GitHub's owner/name: snapshots/_other/<name>/...)
 *   llm-index/<function id>.jsonl              exchanges per function (append-only)
 *   llm-cache/<hh>/<cache key>.json            answer cache -> exchange artifact
 *   store/id                                   this store's id
 *   store/runs/<run id>/run.json               the run manifest
 *   store/runs/<run id>/records/<fid>.json     one record per function (atomic overwrite = upsert)
 *   store/runs/<run id>/eval/<fid>.json        one evaluation result per function (upsert)
 *   store/runs/<run id>/repos/<index>.json     repository progress
 *   store/runs/<run id>/exchanges.jsonl        exchanges of the run (append-only)
 *
 * Writes are atomic (temporary file, then rename; artifacts also flushed to disk) or single
 * appends of one short line, so a crash never leaves a half-written file that a reader would take
 * for a whole one. A function id becomes a file name through `safeName`, which is injective; a run
 * id is checked (`checkRunId`) before it names a folder.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { z } from 'zod';
import type { FunctionStage } from '../contracts';
import { FileArtifacts, writeFileAtomic, type ArtifactKey } from './artifacts';
import { ExchangeIndexEntrySchema, type ExchangeIndexEntry } from './exchanges';
import { safeName } from './names';
import { addRoundsRan, emptyRoundsRan, isClassRecord } from './records';
import { addRefusal, emptyRefusals, type RefusalTotals } from './refusals';
import { SnapshotFolders } from './snapshots';
import {
  checkRunId,
  isRunId,
  RepoProgressSchema,
  RunExistsError,
  RunManifestSchema,
  StoredRecordSchema,
  type EvalResultEntry,
  type EvalResultPage,
  type NewRun,
  type RecordCounts,
  type RecordPage,
  type RepoProgress,
  type RunManifest,
  type Store,
  type StoredRecord,
} from './types';
import { addUsage, callUsage, emptyUsage, type Usage } from './usage';

export { safeName } from './names';

const CacheEntrySchema = z.object({ exchangeKey: z.string(), cachedAt: z.string() });
const EvalResultEntrySchema = z.object({ functionId: z.string(), result: z.unknown() });

async function readText(file: string): Promise<string | null> {
  try {
    return await fsp.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** The `.json` files of a folder, sorted (none when the folder does not exist). */
async function jsonNames(dir: string): Promise<string[]> {
  try {
    return (await fsp.readdir(dir)).filter((n) => n.endsWith('.json')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * One page of a folder of `<id>.json` files in name order, after the file of `after`: the parsed
 * files, and the id to ask after for the next page (null when there is none).
 */
async function jsonFilePage<T>(dir: string, schema: z.ZodType<T>, idOf: (item: T) => string, after: string | null | undefined, limit: number): Promise<{ items: T[]; next: string | null }> {
  const from = after ? `${safeName(after)}.json` : null;
  const names = (await jsonNames(dir)).filter((n) => from === null || n > from);
  const page = names.slice(0, limit);
  const items: T[] = [];
  for (const name of page) {
    const text = await readText(path.join(dir, name));
    if (text !== null) items.push(schema.parse(JSON.parse(text)));
  }
  // The cursor is the last item's id (as with the PostgreSQL store); its file name follows from it.
  const last = items[items.length - 1];
  return { items, next: names.length > limit && last ? idOf(last) : null };
}

/** Lines of an append-only JSON lines file that parse; a torn last line (a crash) is skipped. */
function jsonLines<T>(text: string | null, schema: z.ZodType<T>): T[] {
  const out: T[] = [];
  for (const line of (text ?? '').split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = schema.safeParse(JSON.parse(line));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // torn line
    }
  }
  return out;
}

/** Directories known to exist, so hot appends do one write and no mkdir. */
const createdDirs = new Set<string>();

async function appendLine(file: string, line: string): Promise<void> {
  const dir = path.dirname(file);
  if (!createdDirs.has(dir)) {
    await fsp.mkdir(dir, { recursive: true });
    createdDirs.add(dir);
  }
  try {
    await fsp.appendFile(file, line);
  } catch (err) {
    // The directory was removed behind our back (a cleaned data directory): recreate it once.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await fsp.mkdir(dir, { recursive: true });
    await fsp.appendFile(file, line);
  }
}

/** What counting needs of a record file, kept while the file is unchanged. */
interface CountedRecord {
  mtimeMs: number;
  stage: FunctionStage;
  isClass: boolean;
  debug_rounds: number;
  coverage_rounds: number;
}

export class LocalStore extends FileArtifacts implements Store {
  readonly kind = 'local' as const;
  readonly location: string;
  private readonly snapshots: SnapshotFolders;
  private id: string | null = null;
  /** Per run: how far its exchange index was read, and the totals up to there (the index only grows). */
  private readonly usageRead = new Map<string, { offset: number; totals: Usage; refusals: RefusalTotals }>();
  /** Per run: each record file's modification time, stage and rounds, so counting reads only what changed. */
  private readonly stageCache = new Map<string, Map<string, CountedRecord>>();

  constructor(readonly dataDir: string) {
    super(path.join(dataDir, 'artifacts'));
    this.location = dataDir;
    this.snapshots = new SnapshotFolders(path.join(dataDir, 'snapshots'));
  }

  private runDir(runId: string): string {
    return path.join(this.dataDir, 'store', 'runs', checkRunId(runId));
  }

  async storeId(): Promise<string> {
    if (this.id) return this.id;
    const file = path.join(this.dataDir, 'store', 'id');
    await fsp.mkdir(path.dirname(file), { recursive: true });
    try {
      await fsp.writeFile(file, randomUUID(), { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    this.id = `local:${(await fsp.readFile(file, 'utf8')).trim()}`;
    return this.id;
  }

  // Snapshots ---------------------------------------------------------------------------------

  async saveSnapshot(repoId: string, commit: string, dir: string): Promise<void> {
    const tree = this.snapshots.treeDir(repoId, commit);
    if (path.resolve(dir) === tree || fs.existsSync(tree)) return;
    await this.snapshots.adoptTree(repoId, commit, dir);
  }

  async openSnapshot(repoId: string, commit: string): Promise<string | null> {
    const tree = this.snapshots.treeDir(repoId, commit);
    return fs.existsSync(tree) ? tree : null;
  }

  // LLM exchanges -----------------------------------------------------------------------------

  private exchangeIndexFile(functionId: string): string {
    return path.join(this.dataDir, 'llm-index', `${safeName(functionId)}.jsonl`);
  }

  async appendExchange(entry: ExchangeIndexEntry): Promise<void> {
    const line = JSON.stringify(entry) + '\n';
    if (entry.runId) checkRunId(entry.runId);
    await appendLine(this.exchangeIndexFile(entry.functionId), line);
    if (entry.runId && isRunId(entry.runId)) await appendLine(path.join(this.runDir(entry.runId), 'exchanges.jsonl'), line);
  }

  async listExchanges(functionId: string): Promise<ExchangeIndexEntry[]> {
    // One file per function id; lines are still checked against it.
    return jsonLines(await readText(this.exchangeIndexFile(functionId)), ExchangeIndexEntrySchema).filter((e) => e.functionId === functionId);
  }

  async *listRunExchanges(runId: string): AsyncIterable<ExchangeIndexEntry> {
    yield* jsonLines(await readText(path.join(this.runDir(runId), 'exchanges.jsonl')), ExchangeIndexEntrySchema).filter((e) => e.runId === runId);
  }

  async runUsage(runId: string): Promise<Usage> {
    return (await this.readRunExchanges(runId)).totals;
  }

  async runRefusals(runId: string): Promise<RefusalTotals> {
    return structuredClone((await this.readRunExchanges(runId)).refusals);
  }

  /** Reads what was appended to the run's exchange index since the last call, and adds it to the run's totals. */
  private async readRunExchanges(runId: string): Promise<{ totals: Usage; refusals: RefusalTotals }> {
    const file = path.join(this.runDir(runId), 'exchanges.jsonl');
    const seen = this.usageRead.get(runId) ?? { offset: 0, totals: emptyUsage(), refusals: emptyRefusals() };
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(file, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return seen;
      throw err;
    }
    try {
      const { size } = await handle.stat();
      if (size <= seen.offset) return seen;
      const buf = Buffer.alloc(size - seen.offset);
      await handle.read(buf, 0, buf.length, seen.offset);
      // Only whole lines count; a line being appended is read next time.
      const end = buf.lastIndexOf(0x0a) + 1;
      let totals = seen.totals;
      const refusals = structuredClone(seen.refusals);
      for (const e of jsonLines(buf.subarray(0, end).toString('utf8'), ExchangeIndexEntrySchema)) {
        if (e.runId !== runId) continue;
        totals = addUsage(totals, callUsage(e));
        addRefusal(refusals, e);
      }
      const next = { offset: seen.offset + end, totals, refusals };
      this.usageRead.set(runId, next);
      return next;
    } finally {
      await handle.close();
    }
  }

  private cacheFile(cacheKey: string): string {
    if (!/^[0-9a-f]{16,128}$/.test(cacheKey)) throw new Error(`not a cache key: ${cacheKey}`);
    return path.join(this.dataDir, 'llm-cache', cacheKey.slice(0, 2), `${cacheKey}.json`);
  }

  async cacheGet(cacheKey: string): Promise<ArtifactKey | null> {
    const text = await readText(this.cacheFile(cacheKey));
    if (text === null) return null;
    try {
      const parsed = CacheEntrySchema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data.exchangeKey : null;
    } catch {
      return null;
    }
  }

  async cachePut(cacheKey: string, exchangeKey: ArtifactKey): Promise<void> {
    await writeFileAtomic(this.cacheFile(cacheKey), JSON.stringify({ exchangeKey, cachedAt: new Date().toISOString() }));
  }

  // Runs ----------------------------------------------------------------------------------------

  async createRun(run: NewRun): Promise<RunManifest> {
    const dir = this.runDir(run.runId);
    await fsp.mkdir(dir, { recursive: true });
    const manifest = RunManifestSchema.parse({ ...run, storeId: await this.storeId(), status: 'running', resumed: 0 });
    try {
      // 'wx': the first writer wins; a second run with the same id is refused.
      await fsp.writeFile(path.join(dir, 'run.json'), JSON.stringify(manifest, null, 2), { flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new RunExistsError(`run ${run.runId} already exists in the store at ${this.location}`);
      throw err;
    }
    return manifest;
  }

  async getRun(runId: string): Promise<RunManifest | null> {
    const text = await readText(path.join(this.runDir(runId), 'run.json'));
    return text === null ? null : RunManifestSchema.parse(JSON.parse(text));
  }

  async updateRun(runId: string, patch: Partial<Pick<RunManifest, 'status' | 'summary' | 'finishedAt' | 'outDir' | 'resumed'>>): Promise<RunManifest> {
    const current = await this.getRun(runId);
    if (!current) throw new Error(`no run ${runId} in the store at ${this.location}`);
    const next = RunManifestSchema.parse({ ...current, ...patch });
    await writeFileAtomic(path.join(this.runDir(runId), 'run.json'), JSON.stringify(next, null, 2));
    return next;
  }

  // Records -----------------------------------------------------------------------------------

  private recordsDir(runId: string): string {
    return path.join(this.runDir(runId), 'records');
  }

  async putRecord(runId: string, record: StoredRecord): Promise<void> {
    await writeFileAtomic(path.join(this.recordsDir(runId), `${safeName(record.fn.functionId)}.json`), JSON.stringify(StoredRecordSchema.parse(record)));
  }

  async getRecord(runId: string, functionId: string): Promise<StoredRecord | null> {
    const text = await readText(path.join(this.recordsDir(runId), `${safeName(functionId)}.json`));
    return text === null ? null : StoredRecordSchema.parse(JSON.parse(text));
  }

  private async recordNames(runId: string): Promise<string[]> {
    return jsonNames(this.recordsDir(runId));
  }

  async listRecords(runId: string, options: { after?: string | null; limit?: number } = {}): Promise<RecordPage> {
    const { items, next } = await jsonFilePage(this.recordsDir(runId), StoredRecordSchema, (r) => r.fn.functionId, options.after, options.limit ?? 500);
    return { records: items, next };
  }

  async recordedIds(runId: string, functionIds: string[]): Promise<Set<string>> {
    const present = new Set(await this.recordNames(runId));
    return new Set(functionIds.filter((id) => present.has(`${safeName(id)}.json`)));
  }

  async countRecords(runId: string): Promise<RecordCounts> {
    const counts: RecordCounts = { total: 0, accepted: 0, byStage: {}, rounds: emptyRoundsRan(), classes: { total: 0, accepted: 0, byStage: {}, rounds: emptyRoundsRan() } };
    const known = this.stageCache.get(runId) ?? new Map<string, CountedRecord>();
    this.stageCache.set(runId, known);
    for (const name of await this.recordNames(runId)) {
      const file = path.join(this.recordsDir(runId), name);
      let counted: CountedRecord;
      try {
        const { mtimeMs } = await fsp.stat(file);
        const cached = known.get(name);
        if (cached && cached.mtimeMs === mtimeMs) counted = cached;
        else {
          const r = StoredRecordSchema.parse(JSON.parse(await fsp.readFile(file, 'utf8')));
          const row = r.accepted ? r.record : r.rejection;
          counted = { mtimeMs, stage: r.accepted ? 'accepted' : (r.rejection.stage as FunctionStage), isClass: isClassRecord(r), debug_rounds: row.debug_rounds, coverage_rounds: row.coverage_rounds };
          known.set(name, counted);
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      counts.total += 1;
      if (counted.stage === 'accepted') counts.accepted += 1;
      counts.byStage[counted.stage] = (counts.byStage[counted.stage] ?? 0) + 1;
      if (counted.isClass) {
        counts.classes.total += 1;
        if (counted.stage === 'accepted') counts.classes.accepted += 1;
        counts.classes.byStage[counted.stage] = (counts.classes.byStage[counted.stage] ?? 0) + 1;
        addRoundsRan(counts.classes.rounds, counted);
      }
      addRoundsRan(counts.rounds, counted);
    }
    return counts;
  }

  // Evaluation results ------------------------------------------------------------------------

  private evalDir(runId: string): string {
    return path.join(this.runDir(runId), 'eval');
  }

  async putEvalResult(runId: string, functionId: string, result: unknown): Promise<void> {
    const entry: EvalResultEntry = { functionId, result };
    await writeFileAtomic(path.join(this.evalDir(runId), `${safeName(functionId)}.json`), JSON.stringify(entry));
  }

  async listEvalResults(runId: string, options: { after?: string | null; limit?: number } = {}): Promise<EvalResultPage> {
    const { items, next } = await jsonFilePage(this.evalDir(runId), EvalResultEntrySchema, (e) => e.functionId, options.after, options.limit ?? 200);
    return { results: items, next };
  }

  // Repositories ------------------------------------------------------------------------------

  async putRepoProgress(runId: string, progress: RepoProgress): Promise<void> {
    const file = path.join(this.runDir(runId), 'repos', `${String(progress.index).padStart(6, '0')}.json`);
    await writeFileAtomic(file, JSON.stringify(RepoProgressSchema.parse(progress)));
  }

  async listRepoProgress(runId: string): Promise<RepoProgress[]> {
    const dir = path.join(this.runDir(runId), 'repos');
    let names: string[];
    try {
      names = (await fsp.readdir(dir)).filter((n) => n.endsWith('.json')).sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: RepoProgress[] = [];
    for (const n of names) {
      const text = await readText(path.join(dir, n));
      if (text !== null) out.push(RepoProgressSchema.parse(JSON.parse(text)) as RepoProgress);
    }
    return out;
  }

  async close(): Promise<void> {
    // Nothing held open.
  }
}
