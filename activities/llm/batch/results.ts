/**
 * Reading a batch's folder: its requests' custom_ids, a check of its result files against them,
 * and, once it has ended, one outcome per request (its answer, its error, or "no answer").
 * Everything is read a line at a time, so memory stays bounded by the number of requests, not by
 * the size of the answers.
 */
import * as fsp from 'node:fs/promises';
import { BATCH_FILES, type BatchFileName, type BatchFolders, type BatchManifest } from './folders';
import type { CustomId } from './ids';
import { BATCH_LIMITS } from './limits';
import { BatchFileError, BatchOutputLineSchema, BatchRequestLineSchema, readJsonl } from './lines';
import { outcomeOfLine, unansweredOutcome, type BatchRequestOutcome } from './outcome';

/** A batch's requests: their custom_ids in file order, and the model each asks. */
export interface BatchRequests {
  ids: CustomId[];
  modelOf: Map<CustomId, string>;
}

/** The requests of batch `id`, read from its request file: every line checked, no custom_id twice. */
export async function readBatchRequests(folders: BatchFolders, id: string): Promise<BatchRequests> {
  const input = await folders.open(id, 'requests', BATCH_LIMITS.maxRequestBytes);
  const file = folders.pathOf(id, 'requests');
  if (!input) throw new BatchFileError(`${file} is missing`, file, null);
  const ids: CustomId[] = [];
  const modelOf = new Map<CustomId, string>();
  for await (const { line, value } of readJsonl(input, BatchRequestLineSchema, file)) {
    if (modelOf.has(value.custom_id)) throw new BatchFileError(`${file} line ${line}: custom_id ${value.custom_id} is used twice`, file, line);
    if (ids.length >= BATCH_LIMITS.maxRequests) throw new BatchFileError(`${file} holds more than ${BATCH_LIMITS.maxRequests} requests`, file, line);
    ids.push(value.custom_id);
    modelOf.set(value.custom_id, value.body.model);
  }
  return { ids, modelOf };
}

/** What a batch's result files hold, checked against its requests. */
export interface ResultsScan {
  /** The custom_ids that have a line (an answer or an error). */
  answered: Set<CustomId>;
  /** Lines per result file present. */
  files: { file: string; lines: number }[];
  /**
   * The last line of `results.jsonl` is cut short and the file does not end with a newline: a
   * program is most likely still writing it.
   */
  tornTail: boolean;
}

/** Number of lines of a file, the last counted even without a newline, and whether it ends with one. */
async function lineShape(file: string): Promise<{ lines: number; endsWithNewline: boolean }> {
  const handle = await fsp.open(file, 'r');
  try {
    let lines = 0;
    let last = -1;
    for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
      for (const byte of chunk) if (byte === 10) lines++;
      if (chunk.length) last = chunk[chunk.length - 1]!;
    }
    return { lines: last === 10 || last === -1 ? lines : lines + 1, endsWithNewline: last === 10 };
  } finally {
    await handle.close();
  }
}

/**
 * Checks batch `id`'s result files (`results.jsonl`, `errors.jsonl`) against its requests: every
 * line of the format, every custom_id one of the batch's, none answered twice. A line that breaks
 * a rule is a `BatchFileError` naming the file and line, except a torn last line of
 * `results.jsonl` (see `tornTail`), which is reported instead so the caller can wait for the rest.
 */
export async function scanBatchResults(folders: BatchFolders, id: string, requests: BatchRequests): Promise<ResultsScan> {
  const known = new Set(requests.ids);
  const answered = new Set<CustomId>();
  const files: ResultsScan['files'] = [];
  let tornTail = false;
  for (const name of ['results', 'errors'] as const) {
    const input = await folders.open(id, name, BATCH_LIMITS.maxResultBytes);
    if (!input) continue;
    const file = folders.pathOf(id, name);
    let lines = 0;
    try {
      for await (const { line, value } of readJsonl(input, BatchOutputLineSchema, file)) {
        if (!known.has(value.custom_id)) throw new BatchFileError(`${file} line ${line}: custom_id ${value.custom_id} is not a request of batch ${id}`, file, line);
        if (answered.has(value.custom_id)) throw new BatchFileError(`${file} line ${line}: custom_id ${value.custom_id} is answered twice`, file, line);
        answered.add(value.custom_id);
        lines++;
      }
    } catch (err) {
      if (name === 'results' && err instanceof BatchFileError && err.line !== null) {
        const shape = await lineShape(file);
        if (!shape.endsWithNewline && err.line === shape.lines) {
          tornTail = true;
          files.push({ file, lines });
          continue;
        }
      }
      throw err;
    }
    files.push({ file, lines });
  }
  return { answered, files, tornTail };
}

/**
 * One outcome per request of an ended batch: the answer or error its line holds (read the way a
 * live call's is), then, for each request without a line, a transient "no answer" naming why the
 * batch ended. Lines are checked as `scanBatchResults` does.
 */
export async function* readBatchOutcomes(folders: BatchFolders, manifest: BatchManifest, requests?: BatchRequests): AsyncGenerator<BatchRequestOutcome> {
  const id = manifest.id;
  const reqs = requests ?? (await readBatchRequests(folders, id));
  const where = (customId: CustomId) => `model ${reqs.modelOf.get(customId) ?? '?'} in batch ${id} (${manifest.backend})`;
  const seen = new Set<CustomId>();
  for (const name of ['results', 'errors'] as const) {
    const input = await folders.open(id, name, BATCH_LIMITS.maxResultBytes);
    if (!input) continue;
    const file = folders.pathOf(id, name);
    for await (const { line, value } of readJsonl(input, BatchOutputLineSchema, file)) {
      if (!reqs.modelOf.has(value.custom_id)) throw new BatchFileError(`${file} line ${line}: custom_id ${value.custom_id} is not a request of batch ${id}`, file, line);
      if (seen.has(value.custom_id)) throw new BatchFileError(`${file} line ${line}: custom_id ${value.custom_id} is answered twice`, file, line);
      seen.add(value.custom_id);
      yield outcomeOfLine(value, where(value.custom_id));
    }
  }
  const why = manifest.failure ?? `the batch ended${manifest.endStatus ? ` (${manifest.endStatus})` : ''} without an answer for it`;
  for (const customId of reqs.ids) if (!seen.has(customId)) yield unansweredOutcome(customId, where(customId), why);
}

/** One of a batch's files: where it is, its size and its lines (counted, not parsed), or null when absent. */
export interface BatchFileSummary {
  name: BatchFileName;
  path: string;
  bytes: number | null;
  lines: number | null;
}

/** The files of batch `id`, for a listing: sizes and line counts, read without parsing. */
export async function summarizeBatchFiles(folders: BatchFolders, id: string): Promise<BatchFileSummary[]> {
  const out: BatchFileSummary[] = [];
  for (const name of Object.keys(BATCH_FILES) as BatchFileName[]) {
    const bytes = await folders.sizeOf(id, name);
    const file = folders.pathOf(id, name);
    out.push({ name, path: file, bytes, lines: bytes === null || name === 'manifest' ? null : (await lineShape(file)).lines });
  }
  return out;
}
