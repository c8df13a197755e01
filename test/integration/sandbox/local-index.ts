/**
 * A package index on a local port, for tests that must not reach the internet: the JSON simple
 * API (PEP 691) with each file's upload time (PEP 700), as PyPI serves it, and the files
 * themselves. Its wheels are pure-Python, made on the spot from the modules given.
 */
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { zipBuffer } from '../../support/archives';

export interface IndexRelease {
  /** The distribution's name as its wheel spells it. */
  name: string;
  version: string;
  /** When the index says the file was uploaded (ISO 8601); undefined: the index gives no time. */
  uploaded?: string;
  /** Module files by path inside the wheel (`pkg/__init__.py`). */
  files: Record<string, string>;
}

export interface LocalIndex {
  /** The simple index's URL (`http://127.0.0.1:<port>/simple`). */
  url: string;
  /** Every request path, in order. */
  log: string[];
  close(): Promise<void>;
}

const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** A `py3-none-any` wheel of one release. */
export async function wheelOf(r: IndexRelease): Promise<{ fileName: string; body: Buffer }> {
  const stem = `${r.name.replace(/[-.]+/g, '_')}-${r.version}`;
  const info = `${stem}.dist-info`;
  const members = [
    ...Object.entries(r.files).map(([name, body]) => ({ name, body })),
    { name: `${info}/METADATA`, body: `Metadata-Version: 2.1\nName: ${r.name}\nVersion: ${r.version}\n` },
    { name: `${info}/WHEEL`, body: 'Wheel-Version: 1.0\nGenerator: repost-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n' },
  ];
  const record = [...members.map((m) => `${m.name},,`), `${info}/RECORD,,`].join('\n') + '\n';
  return { fileName: `${stem}-py3-none-any.whl`, body: await zipBuffer([...members, { name: `${info}/RECORD`, body: record }]) };
}

export async function startLocalIndex(releases: IndexRelease[]): Promise<LocalIndex> {
  const files = new Map<string, Buffer>();
  const projects = new Map<string, { filename: string; url: string; hashes: { sha256: string }; 'upload-time'?: string }[]>();
  for (const r of releases) {
    const wheel = await wheelOf(r);
    files.set(wheel.fileName, wheel.body);
    const list = projects.get(normalize(r.name)) ?? [];
    list.push({
      filename: wheel.fileName,
      url: `/files/${wheel.fileName}`,
      hashes: { sha256: createHash('sha256').update(wheel.body).digest('hex') },
      ...(r.uploaded ? { 'upload-time': new Date(r.uploaded).toISOString() } : {}),
    });
    projects.set(normalize(r.name), list);
  }
  const log: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://index.invalid');
    log.push(url.pathname);
    let m: RegExpExecArray | null;
    if ((m = /^\/simple\/([^/]+)\/?$/.exec(url.pathname))) {
      const name = normalize(decodeURIComponent(m[1]!));
      const list = projects.get(name);
      if (!list) {
        res.writeHead(404).end('not found');
        return;
      }
      const body = JSON.stringify({ meta: { 'api-version': '1.1' }, name, files: list, versions: [...new Set(list.map((f) => f.filename.split('-')[1]))] });
      res.writeHead(200, { 'content-type': 'application/vnd.pypi.simple.v1+json' }).end(body);
      return;
    }
    if ((m = /^\/files\/([^/]+)$/.exec(url.pathname)) && files.has(decodeURIComponent(m[1]!))) {
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(files.get(decodeURIComponent(m[1]!)));
      return;
    }
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/simple`,
    log,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
