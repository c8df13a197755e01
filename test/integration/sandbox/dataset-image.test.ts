/** A dataset image holds every package its records need: they then pass offline, without installs. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SandboxExecutor } from '../../../activities/sandbox';
import { buildDatasetImage } from '../../../activities/sandbox/dataset-image';
import { parseRecordsJsonl, runGroundTruth } from '../../../activities/sandbox/repost-records';
import { docker, makeExecutor, testConfig } from './sandbox-env';
import { REPOST_SAMPLE } from '../../support/fixtures';

const FIXTURE = REPOST_SAMPLE;
const TAG = `repost-dataset-test:${process.pid}`;

test('records pass in the dataset image with an empty package cache and no installs', async () => {
  // 217 needs PyYAML; 301 needs nothing.
  const records = parseRecordsJsonl(fs.readFileSync(FIXTURE, 'utf8')).filter((r) => ['217', '301'].includes(r.idx));
  const builder = await makeExecutor('pool');
  const emptyCache = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-empty-cache-'));
  let offline: SandboxExecutor | null = null;
  try {
    const built = await buildDatasetImage(builder, records, { tag: TAG });
    expect(built.requirements).toEqual(['pyyaml']);
    expect(built.packages.map((p) => p.name)).toEqual(['PyYAML']);
    offline = new SandboxExecutor(testConfig({ workerId: `dataset-${process.pid}` }), { docker, image: TAG, packagesDir: emptyCache });
    for (const record of records) {
      const outcome = await runGroundTruth(offline, record, { install: false });
      expect({ idx: record.idx, status: outcome.result.status, exception: outcome.result.exception }).toEqual({ idx: record.idx, status: 'passed', exception: null });
      expect(outcome.result.packages).toEqual([]);
    }
  } finally {
    await builder.close();
    await offline?.close();
    await docker.getImage(TAG).remove({ force: true }).catch(() => undefined);
    fs.rmSync(emptyCache, { recursive: true, force: true });
  }
});
