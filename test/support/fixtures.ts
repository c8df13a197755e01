import * as fs from 'node:fs';
import * as path from 'node:path';

/** 40 records of RepoST's published evaluation set (MIT license beside the file). */
export const REPOST_SAMPLE = path.join(__dirname, '..', 'fixtures', 'repost-execeval-sample.jsonl');

/**
 * The dataset `tsx scripts/start.ts --demo` writes (3 accepted functions of the bundled example
 * repository, crawled as the train split), kept so evaluation tests need no crawl. Regenerate it with the demo when the
 * record format changes.
 */
export const DEMO_DATASET = path.join(__dirname, '..', 'fixtures', 'demo-dataset.jsonl');

/** The qualified names of the accepted records in a `dataset.jsonl`, sorted. */
export function acceptedQualnames(datasetFile: string): string[] {
  return fs
    .readFileSync(datasetFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { qualname: string }).qualname)
    .sort();
}
