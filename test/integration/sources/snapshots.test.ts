/** The snapshot store's tarballs: GitHub archives unpacked by the system `tar` into the store's snapshot folders, once per commit, and refused when unsafe. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { SnapshotStore } from '../../../activities/sources';
import { hashTree, packTree, unpackTree } from '../../../activities/store/snapshots';

const REPOS = path.resolve(__dirname, '../../fixtures/repos');

describe('SnapshotStore', () => {
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'snap-store-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const tarball = (dir: string, top: string) => execFileSync('tar', ['-czf', '-', '-C', path.dirname(dir), `--transform=s,^${path.basename(dir)},${top},`, path.basename(dir)]);

  it('extracts once per commit and reuses it; the tree matches the source', async () => {
    const store = new SnapshotStore(root);
    const tgz = tarball(path.join(REPOS, 'mlkit'), 'datalab-mlkit-abc1234');
    const first = await store.fromTarball('datalab/mlkit', 'abc1234', tgz);
    if (!first.ok) throw new Error(first.reason);
    expect(first.snapshot.reused).toBe(false);
    expect(first.snapshot.dir).toBe(path.join(root, 'datalab', 'mlkit', 'abc1234', 'tree'));
    expect((await hashTree(first.snapshot.dir)).hash).toBe((await hashTree(path.join(REPOS, 'mlkit'))).hash);
    const again = await store.fromTarball('datalab/mlkit', 'abc1234', Buffer.from('ignored: the snapshot exists'));
    expect(again.ok && again.snapshot.reused).toBe(true);
    expect(fs.readdirSync(path.join(root, 'datalab', 'mlkit'))).toEqual(['abc1234']);
  });

  it('refuses non-gzip data, gzip bombs over the limit, oversize tarballs and trees without Python', async () => {
    const store = new SnapshotStore(root);
    expect(await store.fromTarball('a/b', 'c1', Buffer.from('<html>404</html>'))).toEqual({ ok: false, reason: 'not a gzip tarball' });
    const bomb = zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024));
    const limits = { maxTarballBytes: 1024 * 1024, maxTreeBytes: 1024 * 1024 };
    expect(await store.fromTarball('a/b', 'c2', bomb, limits)).toEqual({ ok: false, reason: 'repository too large when unpacked (> 1048576 bytes)' });
    expect(await store.fromTarball('a/b', 'c3', Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(2 * 1024 * 1024)]), limits)).toMatchObject({ ok: false, reason: expect.stringMatching(/^tarball too large/) });
    const docs = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-only-'));
    fs.writeFileSync(path.join(docs, 'README.md'), '# nothing to see\n');
    expect(await store.fromTarball('a/b', 'c4', tarball(docs, 'a-b-c4'))).toEqual({ ok: false, reason: 'no Python files (1 files, none ending in .py)' });
    // Nothing half-written is left behind.
    expect(fs.existsSync(path.join(root, 'a', 'b')) ? fs.readdirSync(path.join(root, 'a', 'b')) : []).toEqual([]);
    expect(() => store.dirFor('a/b', '../etc')).toThrow(/not a commit id/);
  });

  it('gives tar a time limit: an archive that stops arriving ends with a reason, not a wait forever', async () => {
    // The first chunk of a real archive, then nothing more, ever.
    const first: Buffer[] = [];
    for await (const chunk of packTree(path.join(REPOS, 'shop'))) first.push(chunk);
    async function* stalled(): AsyncIterable<Buffer> {
      yield first[0]!.subarray(0, 64);
      await new Promise(() => undefined);
    }
    const dest = path.join(root, 'stalled');
    await expect(unpackTree(stalled(), dest, 500)).rejects.toThrow('tar could not unpack the snapshot archive: it did not finish within 0.5 s and was stopped');
    // The whole archive, within the limit, unpacks as before.
    async function* whole(): AsyncIterable<Buffer> {
      yield* first;
    }
    await unpackTree(whole(), path.join(root, 'whole'));
    expect((await hashTree(path.join(root, 'whole'))).hash).toBe((await hashTree(path.join(REPOS, 'shop'))).hash);
  });
});
