import * as path from 'node:path';

/** 40 records of RepoST's published evaluation set (MIT license beside the file). */
export const REPOST_SAMPLE = path.join(__dirname, '..', 'fixtures', 'repost-execeval-sample.jsonl');
