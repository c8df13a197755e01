/**
 * A source archive fetched from a package index, against a local index over real HTTP: the
 * listing's link and every redirect go to http(s) only, the archive's hash is checked, and a
 * server that never answers ends at the deadline. No container is needed: nothing is built.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { findSourceArchive } from '../../../activities/sandbox/source-build';
import { tarGz } from '../../support/archives';

jest.setTimeout(60_000);

const archive = tarGz([{ name: 'demo-1.0/setup.py', body: 'from setuptools import setup\nsetup()\n' }]);
const sha256 = createHash('sha256').update(archive).digest('hex');

describe('source archives from an index', () => {
  let server: http.Server;
  let index: string;
  const asked: string[] = [];
  /** Per project: the file link its listing gives, and its sha256. */
  const links = new Map<string, { url: string; sha256: string }>();
  let dir: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-sdist-download-'));
    server = http.createServer((req, res) => {
      asked.push(req.url ?? '');
      const listing = /^\/simple\/([^/]+)\/$/.exec(req.url ?? '');
      if (listing) {
        const link = links.get(listing[1]!);
        if (!link) return res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json' });
        return res.end(JSON.stringify({ files: [{ filename: `${listing[1]}-1.0.tar.gz`, url: link.url, hashes: { sha256: link.sha256 } }] }));
      }
      if (req.url === '/files/demo.tar.gz') return res.writeHead(200).end(archive);
      if (req.url === '/files/to-file') return res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      if (req.url === '/files/never') return; // read, never answered
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    index = `http://127.0.0.1:${(server.address() as AddressInfo).port}/simple`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const find = (name: string, deadlineMs = 30_000) =>
    findSourceArchive({ name, specifier: '', findLinks: [], indexUrl: index, downloadDir: path.join(dir, name), deadline: Date.now() + deadlineMs });

  it('downloads the archive the listing names and checks its hash', async () => {
    links.set('demo', { url: '../../files/demo.tar.gz', sha256 });
    const found = await find('demo');
    expect(found).toMatchObject({ name: 'demo', version: '1.0' });
    expect(fs.readFileSync(found!.file).equals(archive)).toBe(true);
    links.set('badhash', { url: '../../files/demo.tar.gz', sha256: '0'.repeat(64) });
    await expect(find('badhash')).rejects.toThrow(/sha256 [0-9a-f]{64} does not match the index's 0{64}/);
    expect(fs.existsSync(path.join(dir, 'badhash'))).toBe(false);
  });

  it('follows a link or a redirect to http(s) only', async () => {
    links.set('filelink', { url: 'file:///etc/passwd', sha256 });
    await expect(find('filelink')).rejects.toThrow(`GET ${index}/filelink/: the link of filelink-1.0.tar.gz to a file URL is refused`);
    links.set('redirected', { url: '../../files/to-file', sha256 });
    const before = asked.length;
    await expect(find('redirected')).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/files\/to-file: a redirect to a file URL is refused$/);
    expect(asked.slice(before)).toEqual(['/simple/redirected/', '/files/to-file']);
  });

  it('ends at the deadline when the index never answers', async () => {
    links.set('never', { url: '../../files/never', sha256 });
    await expect(find('never', 1_000)).rejects.toThrow(/^GET http:\/\/127\.0\.0\.1:\d+\/files\/never: time limit reached$/);
  });
});
