/**
 * Loading a results file produced elsewhere (by `vllm run-batch`, or by any program answering a
 * batch's request file) into the batch it answers. Every line is checked against the Batch API's
 * output format and every custom_id against the batch's requests before anything is written; the
 * batch is the one named, or else the one waiting batch of the file exchange that asked every
 * custom_id of the file. A batch that already has results keeps them: nothing is replaced.
 */
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { BatchFolders, BatchManifest } from './folders';
import { batchIdProblem, type CustomId } from './ids';
import { BATCH_LIMITS } from './limits';
import { BatchFileError, BatchOutputLineSchema, readJsonl } from './lines';
import { readBatchRequests, scanBatchResults, type BatchRequests } from './results';

/** An import that cannot be done as asked; nothing was written. */
export class BatchImportError extends Error {
  override name = 'BatchImportError';
}

export interface ImportedResults {
  batchId: string;
  /** Where the results now are. */
  file: string;
  requests: number;
  answered: number;
  partial: boolean;
}

/** The custom_ids of a results file, every line checked; a custom_id twice is an error naming its line. */
async function customIdsOf(source: string): Promise<CustomId[]> {
  const ids: CustomId[] = [];
  const seen = new Set<CustomId>();
  for await (const { line, value } of readJsonl(fs.createReadStream(source), BatchOutputLineSchema, source)) {
    if (seen.has(value.custom_id)) throw new BatchFileError(`${source} line ${line}: custom_id ${value.custom_id} is answered twice`, source, line);
    seen.add(value.custom_id);
    ids.push(value.custom_id);
  }
  return ids;
}

/** The waiting file-exchange batches that asked every one of `ids`. */
async function batchesAsking(folders: BatchFolders, ids: CustomId[]): Promise<{ manifest: BatchManifest; requests: BatchRequests }[]> {
  const { batches } = await folders.list();
  const found: { manifest: BatchManifest; requests: BatchRequests }[] = [];
  for (const manifest of batches) {
    if (manifest.backend !== 'files' || manifest.state !== 'waiting') continue;
    const requests = await readBatchRequests(folders, manifest.id);
    if (ids.every((id) => requests.modelOf.has(id))) found.push({ manifest, requests });
  }
  return found;
}

/**
 * Loads results file `source` into its batch (`options.batchId`, or the one waiting batch that
 * asked all its custom_ids). A file answering only some of the batch's requests is refused unless
 * `options.partial`: then the others end without an answer and are asked again.
 */
export async function importBatchResults(folders: BatchFolders, source: string, options: { batchId?: string; partial?: boolean; now: Date }): Promise<ImportedResults> {
  const st = await fsp.stat(source).catch(() => null);
  if (!st || !st.isFile()) throw new BatchImportError(`${source} is not a file`);
  if (st.size > BATCH_LIMITS.maxResultBytes) throw new BatchImportError(`${source} is ${st.size} bytes, more than the ${BATCH_LIMITS.maxResultBytes} a results file may have`);
  const ids = await customIdsOf(source);
  if (ids.length === 0) throw new BatchImportError(`${source} holds no result lines`);

  let target: { manifest: BatchManifest; requests: BatchRequests };
  if (options.batchId !== undefined) {
    const problem = batchIdProblem(options.batchId);
    if (problem) throw new BatchImportError(problem);
    const manifest = await folders.readManifest(options.batchId);
    if (manifest.backend !== 'files') throw new BatchImportError(`batch ${manifest.id} is answered by the ${manifest.backend} backend, not the file exchange`);
    if (manifest.state !== 'waiting') throw new BatchImportError(`batch ${manifest.id} has already ended (${manifest.endStatus ?? 'ended'})`);
    const requests = await readBatchRequests(folders, manifest.id);
    const foreign = ids.find((id) => !requests.modelOf.has(id));
    if (foreign !== undefined) throw new BatchImportError(`${source}: custom_id ${foreign} is not a request of batch ${manifest.id}`);
    target = { manifest, requests };
  } else {
    const found = await batchesAsking(folders, ids);
    if (found.length === 0) throw new BatchImportError(`no waiting batch in ${folders.root} asked every custom_id of ${source} (the first is ${ids[0]})`);
    if (found.length > 1) throw new BatchImportError(`batches ${found.map((f) => f.manifest.id).join(', ')} all asked the custom_ids of ${source}; name one with --batch`);
    target = found[0]!;
  }

  const { manifest, requests } = target;
  const id = manifest.id;
  if ((await folders.sizeOf(id, 'results')) !== null) throw new BatchImportError(`batch ${id} already has ${folders.pathOf(id, 'results')}; nothing was changed`);
  const partial = ids.length < manifest.requests;
  if (partial && !options.partial) {
    throw new BatchImportError(`${source} answers ${ids.length} of batch ${id}'s ${manifest.requests} requests; give --partial to load it anyway (the others then end without an answer and are asked again)`);
  }

  await folders.writeFrom(id, 'results', fs.createReadStream(source), BATCH_LIMITS.maxResultBytes);
  // The copy is what counts: check it again, and take it back if it is not what was checked.
  try {
    const scan = await scanBatchResults(folders, id, requests);
    const copied = scan.files.find((f) => f.file === folders.pathOf(id, 'results'))?.lines ?? 0;
    if (scan.tornTail || copied !== ids.length) throw new BatchImportError(`${source} changed while it was being loaded; nothing was loaded`);
  } catch (err) {
    await fsp.rm(folders.pathOf(id, 'results'), { force: true });
    throw err;
  }
  await folders.writeManifest({ ...manifest, imported: { at: options.now.toISOString(), source: path.resolve(source).slice(0, 4096), answered: ids.length, partial } });
  return { batchId: id, file: folders.pathOf(id, 'results'), requests: manifest.requests, answered: ids.length, partial };
}
