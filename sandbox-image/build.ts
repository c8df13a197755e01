/**
 * Builds the sandbox image locally, from nothing a container registry serves:
 *   1. a Debian bookworm root file system made with `debootstrap` from Debian's package mirror,
 *      imported as `repost-sandbox-base:<hash>`;
 *   2. a layer with coverage.py (wheels fetched from PyPI on the host), the harness and an
 *      unprivileged user, tagged `repost-sandbox:<hash of all inputs>`.
 * Each step is skipped when its tag already exists, so a second run costs one `inspect`.
 *
 * Run directly (`tsx sandbox-image/build.ts`) it prints the image tag.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Docker from 'dockerode';

export const COVERAGE_VERSION = '7.10.7';

export const BASE_SPEC = {
  suite: 'bookworm',
  variant: 'minbase',
  // The standard library's parts Debian ships apart (tkinter, venv, distutils): scripts import them.
  include: ['python3', 'python3-pip', 'python3-tk', 'python3-venv', 'python3-distutils', 'ca-certificates', 'procps'],
} as const;

const IMAGE_DIR = __dirname;
export const IMAGE_REPO = 'repost-sandbox';
export const BASE_REPO = 'repost-sandbox-base';
export const IMAGE_LABEL = 'dev.repost.sandbox-image';

type Log = (line: string) => void;

function sha(parts: (string | Buffer)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex');
}

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .filter((f) => !f.includes('__pycache__'))
    .sort();
}

export function baseImageTag(): string {
  return `${BASE_REPO}:${sha([JSON.stringify(BASE_SPEC)]).slice(0, 12)}`;
}

/** The tag changes whenever the base spec, the Dockerfile, the harness or coverage's version does. */
export function sandboxImageTag(): string {
  const harness = listFiles(path.join(IMAGE_DIR, 'harness')).flatMap((f) => [path.relative(IMAGE_DIR, f), fs.readFileSync(f)]);
  const digest = sha([JSON.stringify(BASE_SPEC), COVERAGE_VERSION, fs.readFileSync(path.join(IMAGE_DIR, 'Dockerfile')), ...harness]);
  return `${IMAGE_REPO}:${digest.slice(0, 12)}`;
}

async function imageExists(docker: Docker, tag: string): Promise<boolean> {
  try {
    await docker.getImage(tag).inspect();
    return true;
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode === 404) return false;
    throw err;
  }
}

/** The longest one build command may take (debootstrap over a slow mirror is the longest); killed then. */
const COMMAND_TIMEOUT_MS = 60 * 60_000;
/** `command -v`, a lookup on PATH. */
const LOOKUP_TIMEOUT_MS = 10_000;

function run(cmd: string, args: string[], log: Log): void {
  log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024, timeout: COMMAND_TIMEOUT_MS, killSignal: 'SIGKILL' });
  if (r.status !== 0) {
    const tail = `${r.stdout ?? ''}\n${r.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
    throw new Error(`${cmd} failed (exit ${r.status ?? r.signal ?? r.error?.message}):\n${tail}`);
  }
}

function which(cmd: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore', timeout: LOOKUP_TIMEOUT_MS }).status === 0;
}

/** Streams `tar -c` of a directory; the child's failure surfaces as a stream error. */
function tarStream(dir: string): NodeJS.ReadableStream {
  const child = spawn('tar', ['-C', dir, '--numeric-owner', '-c', '.'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: COMMAND_TIMEOUT_MS, killSignal: 'SIGKILL' });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  child.on('close', (code) => {
    if (code !== 0) child.stdout.destroy(new Error(`tar of ${dir} failed (exit ${code}): ${stderr}`));
  });
  return child.stdout;
}

async function followProgress(docker: Docker, stream: NodeJS.ReadableStream, log: Log): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null, output: { error?: string; errorDetail?: { message?: string } }[]) => {
        const failed = err ?? output.find((o) => o.error || o.errorDetail);
        if (failed) reject(failed instanceof Error ? failed : new Error(String(failed.error ?? failed.errorDetail?.message)));
        else resolve();
      },
      (event: { stream?: string; status?: string }) => {
        const line = (event.stream ?? event.status ?? '').trimEnd();
        if (line) log(line);
      },
    );
  });
}

async function buildBase(docker: Docker, tag: string, workDir: string, log: Log): Promise<void> {
  if (!which('debootstrap')) {
    if (process.getuid?.() === 0 && which('apt-get')) {
      run('apt-get', ['update', '-qq'], log);
      run('apt-get', ['install', '-y', '-qq', 'debootstrap'], log);
    } else {
      throw new Error('debootstrap is required to build the sandbox base image: install it (apt-get install debootstrap) and run again');
    }
  }
  const mirror = process.env.REPOST_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
  const rootfs = path.join(workDir, `rootfs-${tag.split(':')[1]}`);
  fs.rmSync(rootfs, { recursive: true, force: true });
  fs.mkdirSync(rootfs, { recursive: true });
  try {
    run(
      'debootstrap',
      [`--variant=${BASE_SPEC.variant}`, `--include=${BASE_SPEC.include.join(',')}`, BASE_SPEC.suite, rootfs, mirror],
      log,
    );
    // Trim what a sandbox never needs: package lists and caches, documentation.
    for (const p of ['var/cache/apt/archives', 'var/lib/apt/lists', 'usr/share/doc', 'usr/share/man', 'usr/share/locale']) {
      fs.rmSync(path.join(rootfs, p), { recursive: true, force: true });
    }
    const [repo, version] = tag.split(':') as [string, string];
    log(`importing ${tag}`);
    const imported = (await docker.importImage(tarStream(rootfs) as never, { repo, tag: version })) as unknown as NodeJS.ReadableStream;
    await followProgress(docker, imported, log);
  } finally {
    fs.rmSync(rootfs, { recursive: true, force: true });
  }
}

async function buildLayer(docker: Docker, tag: string, base: string, log: Log): Promise<void> {
  const ctx = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-image-'));
  try {
    fs.copyFileSync(path.join(IMAGE_DIR, 'Dockerfile'), path.join(ctx, 'Dockerfile'));
    fs.cpSync(path.join(IMAGE_DIR, 'harness'), path.join(ctx, 'harness'), { recursive: true });
    const wheels = path.join(ctx, 'wheels');
    fs.mkdirSync(wheels);
    // Wheels for the image's CPython 3.11 come from PyPI through the host; the build needs no network.
    run(
      'python3',
      ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', '--python-version', '3.11', '--implementation', 'cp',
        '--abi', 'cp311', '--platform', 'manylinux2014_x86_64', '--platform', 'manylinux_2_17_x86_64', '--platform', 'manylinux_2_5_x86_64',
        '-d', wheels, `coverage==${COVERAGE_VERSION}`],
      log,
    );
    const stream = (await docker.buildImage(tarStream(ctx) as never, {
      t: tag,
      buildargs: { BASE_IMAGE: base },
      labels: { [IMAGE_LABEL]: 'true' },
      rm: true,
      forcerm: true,
    } as never)) as unknown as NodeJS.ReadableStream;
    await followProgress(docker, stream, log);
  } finally {
    fs.rmSync(ctx, { recursive: true, force: true });
  }
}

/** Builds younger than this are kept: another checkout of the project (another version) may be using one. */
const KEEP_RECENT_BUILDS_MS = 24 * 3600 * 1000;

/**
 * Earlier builds (tags of other input hashes) older than a day are untagged; one still used by a
 * container stays. Only hash tags are touched: an image a user tagged by name is left alone.
 */
async function removeOlderTags(docker: Docker, current: string, log: Log): Promise<void> {
  const images = await docker.listImages({ filters: JSON.stringify({ reference: [`${IMAGE_REPO}:*`], label: [IMAGE_LABEL] }) });
  const old = images.filter((i) => Date.now() - i.Created * 1000 > KEEP_RECENT_BUILDS_MS);
  for (const tag of old.flatMap((i) => i.RepoTags ?? [])) {
    if (tag === current || !new RegExp(`^${IMAGE_REPO}:[0-9a-f]{12}$`).test(tag)) continue;
    await docker
      .getImage(tag)
      .remove()
      .then(() => log(`removed the older sandbox image ${tag}`))
      .catch((err: Error) => log(`kept ${tag}: ${err.message}`));
  }
}

export interface EnsureImageOptions {
  docker?: Docker;
  /** Scratch space for the debootstrapped root file system. */
  workDir?: string;
  log?: Log;
}

/** Returns the tag of the sandbox image, building whatever is missing. */
export async function ensureSandboxImage(options: EnsureImageOptions = {}): Promise<{ tag: string; built: boolean }> {
  const docker = options.docker ?? new Docker();
  const log = options.log ?? (() => undefined);
  const tag = sandboxImageTag();
  if (await imageExists(docker, tag)) return { tag, built: false };
  const base = baseImageTag();
  if (!(await imageExists(docker, base))) {
    log(`building base image ${base} with debootstrap (about a minute)`);
    await buildBase(docker, base, options.workDir ?? path.resolve('.data', 'build'), log);
  }
  log(`building sandbox image ${tag}`);
  await buildLayer(docker, tag, base, log);
  await removeOlderTags(docker, tag, log);
  return { tag, built: true };
}

if (require.main === module) {
  const verbose = process.argv.includes('--verbose');
  ensureSandboxImage({ log: (l) => (verbose ? console.error(l) : undefined) })
    .then(({ tag, built }) => {
      console.log(tag);
      if (built) console.error(`built ${tag}`);
    })
    .catch((err: Error) => {
      console.error(`sandbox image build failed: ${err.message}`);
      process.exit(1);
    });
}
