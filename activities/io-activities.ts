/**
 * Repository and dataset I/O activities (task queue `io`): sources, snapshots, analysis,
 * records. Thin wrappers over the domain modules.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Config } from '../temporal.config';
import { dataPaths } from '../temporal.config';
import { RepositoryAnalyzer, selectCandidates } from './analysis';
import { hashTree, snapshotGitHubRepository } from './sources';
import { listExchanges, sumUsage, usageBy, type UsageTotals } from './llm';
import type { ArtifactStore } from './artifacts/store';
import type { RepoSnapshot, RepoSource } from './contracts';
import { finalizeRunFiles, writeFunctionRecord, writeRepoOutcome } from './dataset/records';
import type { IoActivities } from './types';

export const RepoSourceSchema: z.ZodType<RepoSource> = z.union([
  z.object({ kind: z.literal('local'), path: z.string().min(1), name: z.string().optional() }),
  z.object({ kind: z.literal('github'), fullName: z.string().regex(/^[\w.-]+\/[\w.-]+$/), commit: z.string().optional() }),
]);

/**
 * The HEAD commit when the folder is a clean git checkout of its own, else a hash of the tree's
 * paths and contents (a subfolder of a larger repository is pinned by its own content).
 */
async function pinLocalFolder(dir: string): Promise<string> {
  const git = (...args: string[]) => spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
  const top = git('rev-parse', '--show-toplevel');
  if (top.status === 0 && path.resolve(top.stdout.trim()) === dir && git('status', '--porcelain').stdout.trim() === '') {
    const head = git('rev-parse', 'HEAD');
    if (head.status === 0) return head.stdout.trim();
  }
  return `tree-${(await hashTree(dir)).hash.slice(0, 32)}`;
}

/** A pinned, read-only copy of a local folder under the data directory, reused when unchanged. */
async function snapshotLocalFolder(config: Config, source: Extract<RepoSource, { kind: 'local' }>): Promise<RepoSnapshot> {
  const dir = path.resolve(source.path);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new SourceError(`not a directory: ${source.path}`);
  const repoId = source.name ?? path.basename(dir);
  const commit = await pinLocalFolder(dir);
  const snapshotDir = path.join(dataPaths(config).snapshots, `${repoId.replace(/[^\w.-]+/g, '_')}-${commit.slice(-16)}`);
  if (!fs.existsSync(snapshotDir)) {
    const tmp = `${snapshotDir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    // Symlinks are copied as links; the analysis refuses any that points outside the tree.
    fs.cpSync(dir, tmp, { recursive: true, verbatimSymlinks: true, filter: (src) => path.basename(src) !== '.git' });
    fs.renameSync(tmp, snapshotDir);
  }
  return { repoId, commit, snapshotDir };
}

class SourceError extends Error {}

/** The names a script could import the repository's own code by: top-level packages and modules (also under src/). */
export function topLevelModules(paths: Iterable<string>): string[] {
  const names = new Set<string>();
  for (const p of paths) {
    const parts = p.split('/');
    const first = parts[0] === 'src' && parts.length > 1 ? parts[1]! : parts[0]!;
    const name = first.replace(/\.py$/, '');
    if (/^[A-Za-z_]\w*$/.test(name)) names.add(name);
  }
  return [...names].sort();
}

/** Tokens and estimated cost of a run's LLM calls: in total, per repository and per step. */
export async function llmUsageOfRun(dataDir: string, runId: string, functionIds: string[]) {
  const entries = (await Promise.all(functionIds.map((id) => listExchanges(dataDir, id)))).flat().filter((e) => e.runId === runId);
  const table = (m: Map<string, UsageTotals>) => Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)));
  return { total: sumUsage(entries), byRepo: table(usageBy(entries, 'repoId')), byStep: table(usageBy(entries, 'step')) };
}

export interface IoDependencies {
  config: Config;
  store: ArtifactStore;
}

export function createIoActivities({ config, store }: IoDependencies): IoActivities {
  // Snapshots never change, so one parse of a repository serves the listing and all its
  // functions; the options are the same everywhere so the cached parse is found.
  const analyzerOf = (dir: string, repoId: string, commit: string) => RepositoryAnalyzer.openCached(dir, { ...config.analysis, repoId, commit });

  return {
    async loadSources({ sourcesKey, offset, limit }) {
      const all = z.array(RepoSourceSchema).parse(await store.getJson(sourcesKey));
      return { sources: all.slice(offset, offset + limit), total: all.length };
    },

    async snapshotRepository({ source }) {
      try {
        if (source.kind === 'local') return { ok: true, snapshot: await snapshotLocalFolder(config, source) };
        // Pinned to a commit and fetched as a tarball; a bad repository is a skip with a reason,
        // a transient API failure throws and Temporal retries.
        const r = await snapshotGitHubRepository(config, source.fullName, source.commit);
        if (!r.ok) return { ok: false, reason: `${r.skip.stage}: ${r.skip.reason}` };
        return { ok: true, snapshot: { repoId: r.snapshot.repoId, commit: r.snapshot.commit, snapshotDir: r.snapshot.dir } };
      } catch (err) {
        if (err instanceof SourceError) return { ok: false, reason: err.message };
        throw err;
      }
    },

    async listCandidates({ snapshot, settings }) {
      const analyzer = await analyzerOf(snapshot.snapshotDir, snapshot.repoId, snapshot.commit);
      const all = analyzer.functions();
      const chosen = selectCandidates(all, settings.maxFunctionsPerRepo, settings.seed);
      return {
        functions: chosen.map((f) => ({
          functionId: f.id,
          repoId: snapshot.repoId,
          commit: snapshot.commit,
          snapshotDir: snapshot.snapshotDir,
          path: f.path,
          qualname: f.qualname,
          name: f.name,
        })),
        total: all.length,
        dropped: all.filter((f) => !f.kept).length,
        skippedFiles: analyzer.skipped.length,
      };
    },

    async prepareFunction({ fn }) {
      try {
        const analyzer = await analyzerOf(fn.snapshotDir, fn.repoId, fn.commit);
        const a = analyzer.analyze(fn.path, fn.qualname);
        const crossFile = a.dependencies.some((d) => d.path !== fn.path);
        return {
          ok: true,
          prepared: {
            sourceKey: await store.put(a.source),
            contextKey: await store.put(a.context),
            crossFile,
            standalone: a.standalone,
            dependencyCount: a.dependencies.length,
            localModules: topLevelModules(analyzer.repo.modules.keys()),
          },
        };
      } catch (err) {
        return { ok: false, reason: `analysis failed: ${(err as Error).message}` };
      }
    },

    async writeRecord(input) {
      await writeFunctionRecord(store, input);
    },

    async writeRepoOutcome({ run, index, outcome }) {
      await writeRepoOutcome(run.outDir, index, outcome);
    },

    async finalizeRun({ run }) {
      const { skippedRepos: _s, rejectedAt: _r, llm: _l, ...summary } = await finalizeRunFiles(run.runId, run.outDir, (ids) => llmUsageOfRun(config.dataDir, run.runId, ids));
      return summary;
    },
  };
}
