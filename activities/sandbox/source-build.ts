/**
 * Building a package that publishes no wheel for the sandbox's platform, without ever running its
 * code with network or on the host:
 *
 *   1. its source archive is found (a `findLinks` folder, or the index's JSON API) and downloaded
 *      by this process (plain HTTP, no code run);
 *   2. its build requirements are read from `pyproject.toml` as text (default: setuptools and
 *      wheel) and installed as wheels into an environment of the store, like any other set;
 *   3. `pip wheel --no-index --no-build-isolation` runs in a sandbox container with no network,
 *      as the scripts' user, with the archive and the build environment read-only, writing into
 *      a tmpfs of bounded size;
 *   4. of what it left there, exactly one regular file is taken: the wheel of this distribution
 *      and version, its METADATA saying the same (wheel-check.ts), read through `exec` without
 *      following links or blocking, within a size cap; it is renamed into the store's
 *      wheelhouse, where uv finds it next time. Everything else is refused with its reason.
 *
 * The image has no C compiler: a package that needs one fails at step 3 and is reported as not
 * buildable, with the build's last lines.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { z } from 'zod';
import { BUILD_OUTPUT_DIR, BUILD_SOURCE_DIR, HARNESS_DIR, SCRATCH_DIR, SCRIPT_USER, sourceBuildContainerOptions, type SandboxLimits } from './container-spec';
import { startExec } from './docker-exec';
import { validateRequirement } from './install-commands';
import type { InstallFailure } from './install-failure';
import { compareVersions, parseSdistFilename, satisfies, type Version } from './pep440';
import { normalizeDistributionName } from './packages';
import { hostCaBundle } from './uv';
import { checkWheelContents, chooseBuiltWheel } from './wheel-check';

export const DEFAULT_INDEX = 'https://pypi.org/simple';
/** What setuptools-era archives without a `[build-system]` table need (PEP 518's default). */
const DEFAULT_BUILD_REQUIRES = ['setuptools>=40.8.0', 'wheel'];
/** The most one answer of the index (a listing, a source archive) may hold; a larger one is refused. */
const MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024;

export interface SourceArchive {
  file: string;
  name: string;
  version: string;
}

interface IndexFile {
  filename: string;
  url: string;
  hashes?: { sha256?: string };
  yanked?: boolean | string;
}

/**
 * Where a redirect from `from` may lead: http(s) only, and never from https down to plain http
 * (an index reached over https stays on https). Returns the target, or the reason it is refused.
 */
export function redirectTarget(from: string, location: string, what = 'a redirect'): { ok: true; url: string } | { ok: false; reason: string } {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    return { ok: false, reason: `GET ${from}: ${what} to an invalid URL is refused` };
  }
  if (next.protocol !== 'https:' && next.protocol !== 'http:') return { ok: false, reason: `GET ${from}: ${what} to a ${next.protocol.replace(/:$/, '')} URL is refused` };
  if (new URL(from).protocol === 'https:' && next.protocol !== 'https:') return { ok: false, reason: `GET ${from}: ${what} from https to plain http (${next.origin}) is refused` };
  return { ok: true, url: next.toString() };
}

function get(url: string, deadline: number, signal?: AbortSignal, redirects = 5): Promise<Buffer> {
  return new Promise((resolveGet, rejectGet) => {
    // The whole answer must arrive by the deadline (a server trickling bytes gets no longer).
    const timer = setTimeout(() => req.destroy(new Error(`GET ${url}: time limit reached`)), Math.max(0, deadline - Date.now()));
    const resolve = (value: Buffer | Promise<Buffer>) => {
      clearTimeout(timer);
      resolveGet(value);
    };
    const reject = (err: Error) => {
      clearTimeout(timer);
      rejectGet(err);
    };
    const ca = hostCaBundle();
    const client = url.startsWith('https:') ? https : http;
    const req = client.get(
      url,
      {
        headers: { Accept: 'application/vnd.pypi.simple.v1+json', 'User-Agent': 'repost-factory' },
        ...(url.startsWith('https:') && ca ? { ca: fs.readFileSync(ca) } : {}),
        timeout: Math.max(1, deadline - Date.now()),
        signal,
      },
      (res) => {
        if (res.statusCode && res.statusCode >= 300 && res.statusCode < 400 && res.headers.location && redirects > 0) {
          res.resume();
          const next = redirectTarget(url, res.headers.location);
          if (next.ok) resolve(get(next.url, deadline, signal, redirects - 1));
          else reject(new Error(next.reason));
          return;
        }
        if (res.statusCode !== 200) {
          res.resume();
          reject(Object.assign(new Error(`GET ${url}: HTTP ${res.statusCode}`), { status: res.statusCode }));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_DOWNLOAD_BYTES) req.destroy(new Error(`GET ${url}: more than ${MAX_DOWNLOAD_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: time limit reached`)));
    req.on('error', reject);
  });
}

/** The newest archive of `name` that satisfies `specifier`, from the local folders first, then the index. */
export async function findSourceArchive(args: {
  name: string;
  specifier: string;
  findLinks: string[];
  indexUrl: string;
  downloadDir: string;
  deadline: number;
  signal?: AbortSignal;
}): Promise<SourceArchive | null> {
  const wanted = normalizeDistributionName(args.name);
  const pick = <T extends { filename: string }>(files: T[]): (T & { version: Version }) | null => {
    const candidates = files
      .map((f) => ({ ...f, parsed: parseSdistFilename(f.filename) }))
      .filter((f) => f.parsed && normalizeDistributionName(f.parsed.name) === wanted && satisfies(f.parsed.version, args.specifier))
      .map((f) => ({ ...f, version: f.parsed!.version }));
    candidates.sort((a, b) => compareVersions(b.version, a.version));
    return candidates[0] ?? null;
  };
  for (const dir of args.findLinks) {
    if (!fs.existsSync(dir)) continue;
    const best = pick(fs.readdirSync(dir).map((filename) => ({ filename })));
    if (best) return { file: path.join(dir, best.filename), name: wanted, version: best.version.text };
  }
  const listingUrl = `${args.indexUrl.replace(/\/+$/, '')}/${wanted}/`;
  const listing = JSON.parse((await get(listingUrl, args.deadline, args.signal)).toString('utf8')) as { files?: IndexFile[] };
  const best = pick((listing.files ?? []).filter((f) => !f.yanked));
  if (!best) return null;
  const target = path.join(args.downloadDir, path.basename(best.filename));
  if (!fs.existsSync(target)) {
    // The file the listing names follows the same rule as a redirect: no step down from https.
    const file = redirectTarget(listingUrl, best.url, `the link of ${best.filename}`);
    if (!file.ok) throw new Error(file.reason);
    const body = await get(file.url, args.deadline, args.signal);
    const sha = createHash('sha256').update(body).digest('hex');
    if (best.hashes?.sha256 && best.hashes.sha256 !== sha) throw new Error(`${best.filename}: sha256 ${sha} does not match the index's ${best.hashes.sha256}`);
    fs.mkdirSync(args.downloadDir, { recursive: true });
    const partial = `${target}.${process.pid}.part`;
    fs.writeFileSync(partial, body);
    fs.renameSync(partial, target);
  }
  return { file: target, name: wanted, version: best.version.text };
}

/** `[build-system] requires` of an sdist's top-level pyproject.toml (its text; null: none), never executed. */
export function buildRequirements(pyproject: string | null): { requirements: string[]; ignored: string[] } {
  const text = pyproject ?? '';
  const table = /^\[build-system\]\s*$([\s\S]*?)(?=^\[|$(?![\s\S]))/m.exec(text)?.[1] ?? '';
  const list = /^\s*requires\s*=\s*\[([\s\S]*?)\]/m.exec(table)?.[1];
  if (list === undefined) return { requirements: [...DEFAULT_BUILD_REQUIRES], ignored: [] };
  const requirements: string[] = [];
  const ignored: string[] = [];
  for (const m of list.matchAll(/"([^"]*)"|'([^']*)'/g)) {
    const raw = (m[1] ?? m[2]!).trim();
    // Markers are for other Pythons (`; python_version < "3.8"`); keep the requirement itself.
    const requirement = validateRequirement(raw.split(';')[0]!.replace(/\s+/g, ''));
    if (requirement) requirements.push(requirement);
    else ignored.push(raw);
  }
  if (!requirements.some((r) => /^wheel\b/i.test(r))) requirements.push('wheel');
  return { requirements, ignored };
}

export interface BuildOutcome {
  ok: boolean;
  wheel?: string;
  failure?: InstallFailure;
  /** What else the build left in its output folder, each with why it was not taken. */
  refused: string[];
}

/** The build's output listing, as collect_wheel.py prints it. */
const OutputListingSchema = z.object({
  entries: z.array(z.object({ name: z.string(), kind: z.enum(['file', 'symlink', 'directory', 'fifo', 'socket', 'other']), size: z.number() })),
  total: z.number().int(),
});

/** Build output kept for the failure message: its head and tail. */
const BUILD_LOG_BYTES = 64 * 1024;
/** A time limit of the short execs that hand the output over. */
const COLLECT_TIMEOUT_SEC = 60;

/**
 * Runs `pip wheel` for the archive in an offline sandbox container and hands the one wheel of
 * this distribution and version over to `wheelhouse` (see wheel-check.ts for what is taken).
 */
export async function buildWheelInSandbox(args: {
  docker: Docker;
  image: string;
  limits: SandboxLimits;
  envsDir: string;
  workerId: string;
  archive: SourceArchive;
  /** Where the build requirements are inside the container (an environment of the store). */
  buildEnvPath: string;
  wheelhouse: string;
  scratchDir: string;
  deadline: number;
  limitSec: number;
  signal?: AbortSignal;
}): Promise<BuildOutcome> {
  const { docker, archive } = args;
  const what = `${archive.name} ${archive.version}`;
  const failed = (kind: InstallFailure['kind'], message: string, refused: string[] = []): BuildOutcome => ({ ok: false, failure: { kind, packages: [archive.name], message }, refused });
  // The build reads a copy under a name made of the parsed name and version (the scripts' user
  // may read it whatever the permissions of the folder it came from).
  const work = fs.mkdtempSync(path.join(args.scratchDir, `.build-${archive.name}-`));
  fs.chmodSync(work, 0o755);
  const src = path.join(work, 'src');
  fs.mkdirSync(src, { mode: 0o755 });
  const fileName = `${archive.name}-${archive.version}${sdistExtension(archive.file)}`;
  fs.copyFileSync(archive.file, path.join(src, fileName));
  fs.chmodSync(path.join(src, fileName), 0o644);
  let container: Docker.Container | null = null;
  const remove = async () => {
    await container?.remove({ force: true }).catch(() => undefined);
  };
  const onAbort = () => void remove();
  /** One exec in the build container, ended by removing the container at `until`; null when it did not end by then. */
  const execUntil = async (cmd: string[], until: number, outputLimitBytes: number, env?: string[]) => {
    const handle = await startExec(docker, container!, { cmd, user: SCRIPT_USER, env, workingDir: SCRATCH_DIR, outputLimitBytes });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((r) => {
      timer = setTimeout(() => r(null), Math.max(0, until - Date.now()));
    });
    const ended = await Promise.race([handle.done, late]);
    clearTimeout(timer);
    if (ended === null) {
      await remove();
      handle.abandon();
      return null;
    }
    return { exitCode: ended.exitCode, stdout: handle.stdout, stderr: handle.stderr };
  };
  const cancelled = (): BuildOutcome => failed('cancelled', `building ${archive.name} was cancelled`);
  try {
    container = await docker.createContainer(
      sourceBuildContainerOptions({
        image: args.image,
        limits: args.limits,
        envsDir: args.envsDir,
        workerId: args.workerId,
        sourceDir: src,
        lifetimeSec: (args.deadline - Date.now()) / 1000 + COLLECT_TIMEOUT_SEC,
      }),
    );
    args.signal?.addEventListener('abort', onAbort);
    if (args.signal?.aborted) return cancelled();
    await container.start();
    const build = await execUntil(
      ['python3', '-m', 'pip', 'wheel', '--no-deps', '--no-index', '--no-build-isolation', '--no-cache-dir', '--disable-pip-version-check',
        '--progress-bar', 'off', '--wheel-dir', BUILD_OUTPUT_DIR, `${BUILD_SOURCE_DIR}/${fileName}`],
      args.deadline,
      BUILD_LOG_BYTES,
      [`PYTHONPATH=${args.buildEnvPath}`, 'HOME=/scratch', 'TMPDIR=/tmp', 'PIP_NO_INPUT=1', 'PYTHONDONTWRITEBYTECODE=1'],
    );
    if (args.signal?.aborted) return cancelled();
    if (build === null) return failed('timeout', `the install time limit of ${args.limitSec}s was reached while building ${what} from source`);
    if (build.exitCode !== 0) {
      // pip closes with a box of its own advice; the package's own last words are above it.
      const log = `${build.stdout.toString()}\n${build.stderr.toString()}`;
      const lines = log.split('\n').map((l) => l.trim()).filter((l) => l && !/^(?:[×╰│║]|note:|hint:|error: subprocess-exited|See above|\[end of output\]|\^+$)/.test(l));
      return failed('build-failed', `building ${what} from source in the sandbox (offline, no compiler) failed: ${lines.slice(-4).join(' | ')}`);
    }

    // The build is over: list what it left (lstat only, after killing whatever it left running).
    const collectBy = Date.now() + COLLECT_TIMEOUT_SEC * 1000;
    const collector = ['python3', '-I', `${HARNESS_DIR}/collect_wheel.py`];
    const listed = await execUntil([...collector, 'list', BUILD_OUTPUT_DIR], collectBy, 1024 * 1024);
    if (args.signal?.aborted) return cancelled();
    const listing = listed?.exitCode === 0 ? OutputListingSchema.safeParse(safeJson(listed.stdout.toString())) : null;
    if (!listing?.success) return failed('build-failed', `the output of building ${what} could not be listed${listed ? `: ${listed.stderr.toString().trim().slice(-300)}` : ''}`);
    const maxBytes = args.limits.scratchMb * 1024 * 1024;
    const choice = chooseBuiltWheel(listing.data.entries, archive, maxBytes, listing.data.total);
    if (!choice.ok) return failed('build-failed', `building ${what} from source: ${choice.reason}${choice.refused.length ? ` (refused: ${choice.refused.join('; ')})` : ''}`, choice.refused);

    // Its bytes, opened without following a link or blocking on a FIFO, at most maxBytes.
    const read = await execUntil([...collector, 'read', BUILD_OUTPUT_DIR, choice.wheel.name, String(maxBytes)], collectBy, maxBytes + 1);
    if (args.signal?.aborted) return cancelled();
    const bytes = read?.exitCode === 0 ? read.stdout.bytes() : null;
    if (!bytes) return failed('build-failed', `the wheel of ${what} could not be handed over: ${read?.stderr.toString().trim().slice(-300) || 'the time limit was reached'}`, choice.refused);
    const problem = await checkWheelContents(bytes, archive);
    if (problem) return failed('build-failed', `the wheel ${choice.wheel.name} built from ${what} is refused: ${problem}`, choice.refused);

    // Written beside its final name, then renamed: a reader never sees half a wheel.
    fs.mkdirSync(args.wheelhouse, { recursive: true });
    const target = path.join(args.wheelhouse, choice.wheel.name);
    const partial = `${target}.${process.pid}.${randomBytes(4).toString('hex')}.part`;
    fs.writeFileSync(partial, bytes, { flag: 'wx', mode: 0o644 });
    fs.renameSync(partial, target);
    return { ok: true, wheel: target, refused: choice.refused };
  } finally {
    args.signal?.removeEventListener('abort', onAbort);
    await remove();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** `.tar.gz`, `.zip`, ... of an archive's file name. */
function sdistExtension(file: string): string {
  return /\.(?:tar\.gz|tar\.bz2|tgz|zip)$/i.exec(file)?.[0]?.toLowerCase() ?? '.tar.gz';
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
