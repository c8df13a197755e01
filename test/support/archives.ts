/**
 * Archives with any member names and contents, made in memory: a tarball's headers written with
 * the `tar` package's Header (long names through a pax header), zips with `yazl`.
 */
import * as zlib from 'node:zlib';
import { Header, Pax } from 'tar';
import * as yazl from 'yazl';

export interface TarMember {
  name: string;
  body?: string | Buffer;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'FIFO';
  linkpath?: string;
}

function block(header: Header): Buffer {
  const buf = Buffer.alloc(512);
  header.encode(buf, 0);
  return buf;
}

function padded(body: Buffer): Buffer {
  const rest = body.length % 512;
  return rest === 0 ? body : Buffer.concat([body, Buffer.alloc(512 - rest)]);
}

/** An uncompressed tar stream of the members, in order. */
export function tarBuffer(members: TarMember[]): Buffer {
  const parts: Buffer[] = [];
  const mtime = new Date(0);
  for (const m of members) {
    const body = Buffer.from(m.body ?? '');
    const type = m.type ?? 'File';
    const data = { path: m.name, mode: type === 'Directory' ? 0o755 : 0o644, size: type === 'File' ? body.length : 0, type, linkpath: m.linkpath, mtime, uid: 0, gid: 0 };
    const header = new Header(data);
    if (Buffer.byteLength(m.name) >= 100) {
      // Long names travel in a pax extended header before the entry.
      parts.push(new Pax({ path: m.name, mtime }).encode());
    }
    parts.push(block(header));
    if (type === 'File') parts.push(padded(body));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

export function tarGz(members: TarMember[]): Buffer {
  return zlib.gzipSync(tarBuffer(members));
}

/** A zip of the members (files only). */
export function zipBuffer(members: { name: string; body: string | Buffer }[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const m of members) zip.addBuffer(Buffer.from(m.body), m.name, { mtime: new Date(0), mode: 0o644 });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}
