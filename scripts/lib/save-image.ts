/**
 * `docker save` of the sandbox image into an exported dataset folder (images/sandbox-image.tar),
 * so a machine without this checkout loads it with `docker load -i` and builds the tasks FROM it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pipeline } from 'node:stream/promises';
import Docker from 'dockerode';

export async function saveImage(image: string, dir: string, docker: Docker = new Docker()): Promise<string> {
  const rel = 'images/sandbox-image.tar';
  const target = path.join(dir, rel);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const partial = `${target}.partial`;
  await pipeline(await docker.getImage(image).get(), fs.createWriteStream(partial));
  fs.renameSync(partial, target);
  return rel;
}
