/**
 * One image for offline evaluation of a whole dataset: the sandbox image plus every package the
 * dataset's scripts need, so users evaluate with a single image and no registry (RepoST ships
 * such an image with its datasets). The requirement sets are found by running each record with
 * its ground truth and installs enabled; their union is installed as one set and copied into
 * the image at the path already on PYTHONPATH.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import type { SandboxExecutor } from './executor';
import { BAKED_PACKAGES } from './container-spec';
import { mapConcurrent, runGroundTruth, type RepostRecord } from './repost-records';
import type { InstalledPackage } from './schema';

export interface DatasetImage {
  tag: string;
  requirements: string[];
  packages: InstalledPackage[];
  /** Records that still failed on a missing module (their package could not be installed). */
  unresolved: string[];
}

export async function buildDatasetImage(
  executor: SandboxExecutor,
  records: RepostRecord[],
  options: { tag: string; concurrency?: number; log?: (line: string) => void },
): Promise<DatasetImage> {
  const log = options.log ?? (() => undefined);
  const requirements = new Set<string>();
  const unresolved: string[] = [];
  await mapConcurrent(records, options.concurrency ?? executor.config.pool.size, async (record) => {
    const outcome = await runGroundTruth(executor, record);
    for (const r of outcome.result.requirements) requirements.add(r);
    if (outcome.result.notes.some((n) => /missing|not installed/.test(n))) unresolved.push(record.idx);
    log(`${record.idx} ${record.func_name}: ${outcome.result.status}${outcome.result.requirements.length ? ` needs ${outcome.result.requirements.join(' ')}` : ''}`);
  });
  const union = [...requirements].sort();
  let packages: InstalledPackage[] = [];
  const ctx = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-dataset-image-'));
  try {
    fs.mkdirSync(path.join(ctx, 'packages'));
    if (union.length > 0) {
      const ensured = await executor.packages.ensure(union);
      if (!ensured.ok) throw new Error(`installing the dataset's packages failed: ${ensured.error}`);
      packages = ensured.set.packages;
      // Real copies for the build context (the store holds hard links); timestamps kept so the byte code stays valid.
      fs.cpSync(ensured.set.hostPath, path.join(ctx, 'packages'), { recursive: true, preserveTimestamps: true, filter: (src) => !src.endsWith('.repost-packages.json') });
    }
    fs.writeFileSync(
      path.join(ctx, 'Dockerfile'),
      [
        `FROM ${executor.image}`,
        `COPY --chown=0:0 packages/ ${BAKED_PACKAGES}/`,
        `LABEL dev.repost.dataset-requirements=${JSON.stringify(union.join(' '))}`,
        '',
      ].join('\n'),
    );
    const stream = await executor.docker.buildImage(tarStream(ctx) as never, { t: options.tag, rm: true, forcerm: true } as never);
    await follow(executor.docker, stream as unknown as NodeJS.ReadableStream, log);
  } finally {
    fs.rmSync(ctx, { recursive: true, force: true });
  }
  return { tag: options.tag, requirements: union, packages, unresolved };
}

/** The build context as a tar stream: a folder this command made, with a time limit like every spawn. */
function tarStream(dir: string): NodeJS.ReadableStream {
  return spawn('tar', ['-C', dir, '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'], timeout: TAR_TIMEOUT_MS, killSignal: 'SIGKILL' }).stdout;
}

const TAR_TIMEOUT_MS = 30 * 60 * 1000;

function follow(docker: Docker, stream: NodeJS.ReadableStream, log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null, output: { error?: string }[]) => {
        const failed = err ?? output.find((o) => o.error);
        if (failed) reject(failed instanceof Error ? failed : new Error(String(failed.error)));
        else resolve();
      },
      (event: { stream?: string }) => event.stream?.trim() && log(event.stream.trim()),
    );
  });
}
