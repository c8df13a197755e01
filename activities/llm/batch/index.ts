/**
 * Batch LLM mode's parts that know nothing of Temporal: the Batch API's file formats, what an
 * answer line means, when to flush, the batch folders, and the two backends (`openai`, `files`).
 */
export { BATCH_ENDPOINT, BATCH_COMPLETION_WINDOW, BATCH_LIMITS } from './limits';
export { BatchIdSchema, CustomIdSchema, RemoteIdSchema, newBatchId, batchIdProblem, type BatchId, type CustomId } from './ids';
export {
  batchRequestLine,
  BatchRequestLineSchema,
  BatchOutputLineSchema,
  BatchFileError,
  jsonlText,
  lineBytes,
  readJsonl,
  type BatchRequestLine,
  type BatchOutputLine,
} from './lines';
export { outcomeOfLine, unansweredOutcome, type BatchRequestOutcome } from './outcome';
export { FlushPolicySchema, BatchAccumulator, RequestTooLargeError, admit, flushDue, flushDueAt, type FlushPolicy, type FlushReason, type OpenBatch, type Flushed } from './flush-policy';
export {
  BatchFolders,
  BatchManifestSchema,
  BatchNotFoundError,
  BATCH_FILES,
  BATCH_BACKENDS,
  BATCH_MANIFEST_SCHEMA,
  type BatchManifest,
  type BatchBackendKind,
  type BatchEndStatus,
} from './folders';
export { readBatchRequests, scanBatchResults, readBatchOutcomes, summarizeBatchFiles, type BatchRequests, type ResultsScan, type BatchFileSummary } from './results';
export { makeBatchFolder, BatchRejectedError, type BatchBackend, type BatchPoll, type PreparedBatch } from './backend';
export { FileExchangeBackend } from './files-backend';
export { OpenAiBatchBackend, BATCH_METADATA_KEY, type OpenAiBatchBackendOptions } from './openai-backend';
export { importBatchResults, BatchImportError, type ImportedResults } from './import';
