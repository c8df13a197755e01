import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { LocalStore } from '../../activities/store/local';
import { prepareSources } from '../../scripts/lib/crawl';
import { ForeignServerError, startDevServer } from '../../scripts/lib/temporal-server';

const DEMO_REPO = path.resolve(__dirname, '../../scripts/demo/example-repo');

describe('the sources of a crawl', () => {
  it('pins and stores local folders, and crawls a repeated source once', async () => {
    const store = new LocalStore(fs.mkdtempSync(path.join(os.tmpdir(), 'sources-')));
    const logged: string[] = [];
    const sources = await prepareSources(
      store,
      [
        { kind: 'local', path: DEMO_REPO, name: 'textkit' },
        { kind: 'local', path: `${DEMO_REPO}/`, name: 'textkit' },
        { kind: 'local', path: DEMO_REPO, name: 'textkit-copy' },
        { kind: 'github', fullName: 'Owner/Repo' },
        { kind: 'github', fullName: 'owner/repo' },
        { kind: 'local', path: '/nonexistent/folder' },
      ],
      (l) => logged.push(l),
    );
    expect(sources.map((s) => (s.kind === 'github' ? s.fullName : (s.name ?? s.path)))).toEqual(['textkit', 'textkit-copy', 'Owner/Repo', '/nonexistent/folder']);
    expect(logged).toHaveLength(2);
    const pinned = sources[0]!.kind === 'local' ? sources[0]!.pinned! : null;
    expect(pinned?.repoId).toBe('textkit');
    // The tree is in the store: a worker anywhere opens it from there, not from the user's folder.
    const dir = await store.openSnapshot(pinned!.repoId, pinned!.commit);
    expect(fs.readFileSync(path.join(dir!, 'textkit', 'ranges.py'), 'utf8')).toBe(fs.readFileSync(path.join(DEMO_REPO, 'textkit', 'ranges.py'), 'utf8'));
  });
});

describe('the embedded Temporal server', () => {
  it('refuses a port held by a program it did not start, saying how to use it on purpose', async () => {
    const squatter = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => squatter.once('listening', r));
    const port = (squatter.address() as net.AddressInfo).port;
    try {
      const dbFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tdb-')), 'dev.sqlite');
      const attempt = startDevServer({ cli: '/bin/false', port, namespace: 'default', dbFile });
      await expect(attempt).rejects.toBeInstanceOf(ForeignServerError);
      await expect(attempt).rejects.toThrow(/TEMPORAL_ADDRESS=127\.0\.0\.1:\d+.*REPOST_TEMPORAL_PORT/);
    } finally {
      squatter.close();
    }
  });
});
