/**
 * A run's files and report, into its folder: `dataset.jsonl`, `rejections.jsonl`, `summary.json`
 * and `run.json` (exported from the store a page at a time) and `report.html` with the pages it
 * links. The one way a crawl's folder is written, whoever launched the crawl (the command line, a
 * schedule, another machine): by the crawl's last activity; a replay writes them again the same way.
 */
import type { RunOutputs } from '../contracts';
import { exportRunFiles } from '../dataset/run-files';
import { runPaths } from '../dataset/records';
import { StoreRunReader } from '../dataset/run-reader';
import type { Store } from '../store/types';
import { writeRunReport } from './write-report';

export async function writeRunOutputs(store: Store, runId: string, outDir: string, progress: { tick?: () => void } = {}): Promise<RunOutputs> {
  await exportRunFiles(store, runId, outDir, progress);
  const report = await writeRunReport(await StoreRunReader.open(store, runId), outDir);
  return { outDir, dataset: runPaths(outDir).dataset, report: report.file, records: report.records, rejections: report.rejections };
}
