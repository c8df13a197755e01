/**
 * Third-party packages for scripts, installed once per requirement set and shared.
 *
 * A set of requirements is hashed (with the image's Python tag) into a folder name under the
 * packages directory; `pip install --target` fills a temporary folder in a separate container
 * that has network (the bridge) and runs as the sandbox user, and the folder is renamed into
 * place only when complete, so a half-made install is never seen. Test runs mount the whole
 * packages directory read-only and put their set's folder on the path; they keep no network.
 *
 * TLS: hosts that reach the registry through an intercepting proxy trust an extra CA; the
 * install container gets the host's CA bundle (read-only) so pip verifies the same way the
 * host does. If the container still cannot reach the registry, the install falls back to the
 * host's pip with the image's platform tags (`--python-version 3.11 --only-binary=:all:`).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { z } from 'zod';
import { PACKAGES_MOUNT, SCRIPT_USER, sandboxLabels } from './container-spec';
import { validateRequirement } from './install-commands';
import { normalizeDistributionName } from './packages';
import { InstalledPackageSchema, type InstalledPackage } from './schema';

/** The interpreter every install targets: the image's CPython on x86-64 Linux. */
export const PYTHON_TAG = 'cp311-manylinux-x86_64';
const MANIFEST = '.repost-packages.json';
const INSTALL_TARGET = '/opt/repost/install-target';
const CA_MOUNT = '/etc/repost/ca-bundle.crt';

const ManifestSchema = z.object({
  pythonTag: z.string(),
  requirements: z.array(z.string()),
  packages: z.array(InstalledPackageSchema),
  installedWith: z.enum(['container', 'host']),
});

export interface PackageSet {
  key: string;
  requirements: string[];
  packages: InstalledPackage[];
  /** Where the set lives inside sandbox containers. */
  containerPath: string;
  hostPath: string;
}

export type EnsureResult = { ok: true; set: PackageSet } | { ok: false; error: string };

export interface PackageCacheOptions {
  docker: Docker;
  image: string;
  packagesDir: string;
  workerId: string;
  installTimeoutSec: number;
  /** CA bundle for the install container; default: the host's (PIP_CERT, SSL_CERT_FILE, ...). */
  caBundle?: string | null;
  /** Fall back to the host's pip when the install container cannot reach the registry. */
  hostFallback?: boolean;
  heartbeat?: () => void;
}

/** `Name[extra]>=1` -> `name[extra]>=1`, the spelling hashed and shown. */
export function canonicalRequirement(requirement: string): string {
  const valid = validateRequirement(requirement);
  if (!valid) throw new Error(`not a valid requirement: ${requirement}`);
  const m = /^([A-Za-z0-9._-]+)(.*)$/.exec(valid)!;
  return normalizeDistributionName(m[1]!) + m[2]!;
}

export function requirementSetKey(requirements: string[]): string {
  const canonical = [...new Set(requirements.map(canonicalRequirement))].sort();
  return createHash('sha256').update(JSON.stringify({ python: PYTHON_TAG, requirements: canonical })).digest('hex').slice(0, 20);
}

function defaultCaBundle(): string | null {
  const env = process.env;
  for (const candidate of [env.PIP_CERT, env.REQUESTS_CA_BUNDLE, env.SSL_CERT_FILE, '/etc/ssl/certs/ca-certificates.crt']) {
    if (candidate && fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** Reads name and version of every distribution pip left in a target folder. */
export function installedDistributions(dir: string): InstalledPackage[] {
  const out: InstalledPackage[] = [];
  for (const entry of fs.readdirSync(dir)) {
    if (!entry.endsWith('.dist-info') && !entry.endsWith('.egg-info')) continue;
    const metadataFile = ['METADATA', 'PKG-INFO'].map((f) => path.join(dir, entry, f)).find((f) => fs.existsSync(f));
    if (!metadataFile) continue;
    const head = fs.readFileSync(metadataFile, 'utf8').split(/\r?\n\r?\n/)[0]!;
    const name = /^Name:\s*(.+)$/m.exec(head)?.[1]?.trim();
    const version = /^Version:\s*(.+)$/m.exec(head)?.[1]?.trim();
    if (name && version) out.push({ name, version });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

const NETWORK_FAILURE = /NewConnectionError|Temporary failure in name resolution|Network is unreachable|SSLError|CERTIFICATE_VERIFY_FAILED|ProxyError|Could not fetch URL|timed out/i;

export class PackageCache {
  private readonly inFlight = new Map<string, Promise<EnsureResult>>();
  private readonly failures = new Map<string, string>();

  constructor(private readonly options: PackageCacheOptions) {
    fs.mkdirSync(options.packagesDir, { recursive: true });
  }

  /** Deletes temporary install folders older than two install timeouts (left by a crashed worker). */
  removeAbandonedInstalls(): number {
    const cutoff = Date.now() - 2 * this.options.installTimeoutSec * 1000;
    let removed = 0;
    for (const entry of fs.readdirSync(this.options.packagesDir)) {
      if (!entry.startsWith('.tmp-')) continue;
      const full = path.join(this.options.packagesDir, entry);
      try {
        if (fs.statSync(full).mtimeMs < cutoff) {
          fs.rmSync(full, { recursive: true, force: true });
          removed += 1;
        }
      } catch {
        // Already gone: another worker cleaned it.
      }
    }
    return removed;
  }

  /** The installed set for these requirements, if it is already in the cache. */
  lookup(requirements: string[]): PackageSet | null {
    const key = requirementSetKey(requirements);
    const hostPath = path.join(this.options.packagesDir, key);
    try {
      const manifest = ManifestSchema.parse(JSON.parse(fs.readFileSync(path.join(hostPath, MANIFEST), 'utf8')));
      return { key, requirements: manifest.requirements, packages: manifest.packages, hostPath, containerPath: `${PACKAGES_MOUNT}/${key}` };
    } catch {
      return null;
    }
  }

  /** Installs the set unless cached. A failed set is remembered for the life of this cache. */
  ensure(requirements: string[]): Promise<EnsureResult> {
    const key = requirementSetKey(requirements);
    const cached = this.lookup(requirements);
    if (cached) return Promise.resolve({ ok: true, set: cached });
    const failed = this.failures.get(key);
    if (failed) return Promise.resolve({ ok: false, error: failed });
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.install(key, [...new Set(requirements.map(canonicalRequirement))].sort()).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async install(key: string, requirements: string[]): Promise<EnsureResult> {
    const tmp = fs.mkdtempSync(path.join(this.options.packagesDir, `.tmp-${key}-`));
    fs.chmodSync(tmp, 0o777); // the sandbox user writes here from inside the container
    try {
      let outcome = await this.installInContainer(tmp, requirements);
      let installedWith: 'container' | 'host' = 'container';
      if (!outcome.ok && (this.options.hostFallback ?? true) && NETWORK_FAILURE.test(outcome.log)) {
        fs.rmSync(tmp, { recursive: true, force: true });
        fs.mkdirSync(tmp, { mode: 0o777 });
        outcome = await this.installOnHost(tmp, requirements);
        installedWith = 'host';
      }
      if (!outcome.ok) {
        const error = `pip install ${requirements.join(' ')} failed: ${lastLines(outcome.log, 8)}`;
        this.failures.set(key, error);
        return { ok: false, error };
      }
      const packages = installedDistributions(tmp);
      fs.writeFileSync(path.join(tmp, MANIFEST), JSON.stringify({ pythonTag: PYTHON_TAG, requirements, packages, installedWith }, null, 2));
      fs.chmodSync(tmp, 0o755);
      const final = path.join(this.options.packagesDir, key);
      try {
        fs.renameSync(tmp, final);
      } catch (err) {
        // Another worker finished the same set first: theirs is as good as ours.
        if (!fs.existsSync(path.join(final, MANIFEST))) throw err;
      }
      return { ok: true, set: this.lookup(requirements)! };
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }

  private async installInContainer(targetDir: string, requirements: string[]): Promise<{ ok: boolean; log: string }> {
    const { docker, image, workerId } = this.options;
    const caBundle = this.options.caBundle === undefined ? defaultCaBundle() : this.options.caBundle;
    const env = ['HOME=/scratch', 'PIP_DISABLE_PIP_VERSION_CHECK=1', 'PIP_NO_INPUT=1', 'PYTHONPATH='];
    if (caBundle) env.push(`PIP_CERT=${CA_MOUNT}`, `SSL_CERT_FILE=${CA_MOUNT}`);
    if (process.env.PIP_INDEX_URL) env.push(`PIP_INDEX_URL=${process.env.PIP_INDEX_URL}`);
    const binds = [`${targetDir}:${INSTALL_TARGET}:rw`];
    if (caBundle) binds.push(`${fs.realpathSync(caBundle)}:${CA_MOUNT}:ro`);
    const container = await docker.createContainer({
      Image: image,
      Cmd: ['python3', '-m', 'pip', 'install', '--no-cache-dir', '--progress-bar', 'off', '--target', INSTALL_TARGET, ...requirements],
      User: SCRIPT_USER,
      Env: env,
      WorkingDir: '/scratch',
      Labels: sandboxLabels(workerId, 'install'),
      HostConfig: {
        NetworkMode: 'bridge',
        Memory: 2048 * 1024 * 1024,
        MemorySwap: 2048 * 1024 * 1024,
        PidsLimit: 512,
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        Tmpfs: { '/scratch': 'rw,size=1024m,uid=10001,gid=10001,mode=0700', '/tmp': 'rw,size=2048m,mode=1777' },
        Binds: binds,
      },
    });
    const heartbeat = this.options.heartbeat ? setInterval(this.options.heartbeat, 5000) : null;
    try {
      await container.start();
      const waited = await Promise.race([
        container.wait() as Promise<{ StatusCode: number }>,
        new Promise<null>((r) => setTimeout(() => r(null), this.options.installTimeoutSec * 1000).unref()),
      ]);
      const logs = (await container.logs({ stdout: true, stderr: true, follow: false })) as Buffer;
      const log = demuxedText(logs);
      if (waited === null) return { ok: false, log: `${log}\ninstall timed out after ${this.options.installTimeoutSec}s` };
      return { ok: waited.StatusCode === 0, log };
    } finally {
      if (heartbeat) clearInterval(heartbeat);
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  /**
   * The host's pip, installing for the image's interpreter: CPython 3.11 wheels for every glibc the
   * image's Debian (2.36) runs. Packages published only as source then get a second try with the
   * host's own pip, which builds them, but only when the host's Python is 3.11 as well.
   */
  private async installOnHost(targetDir: string, requirements: string[]): Promise<{ ok: boolean; log: string }> {
    const platforms = ['manylinux2014_x86_64', 'manylinux1_x86_64', 'linux_x86_64', 'any'];
    for (let minor = 5; minor <= 36; minor++) platforms.push(`manylinux_2_${minor}_x86_64`);
    const base = ['-m', 'pip', 'install', '--no-cache-dir', '--disable-pip-version-check', '--target', targetDir];
    const binaryOnly = await this.hostPip([
      ...base, '--python-version', '3.11', '--implementation', 'cp', '--abi', 'cp311', '--abi', 'abi3', '--abi', 'none',
      ...platforms.flatMap((p) => ['--platform', p]), '--only-binary=:all:', ...requirements,
    ]);
    if (binaryOnly.ok) return binaryOnly;
    const version = await this.hostPip(['-c', 'import sys; print(sys.version_info[:2] == (3, 11))']);
    if (version.log.trim() !== 'True') return binaryOnly;
    fs.rmSync(targetDir, { recursive: true, force: true });
    fs.mkdirSync(targetDir, { mode: 0o777 });
    const built = await this.hostPip([...base, ...requirements]);
    return built.ok ? built : { ok: false, log: `${binaryOnly.log}\n${built.log}` };
  }

  private hostPip(args: string[]): Promise<{ ok: boolean; log: string }> {
    return new Promise((resolve) => {
      const child = spawn('python3', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let log = '';
      child.stdout.on('data', (d) => (log = (log + d).slice(-20000)));
      child.stderr.on('data', (d) => (log = (log + d).slice(-20000)));
      const timer = setTimeout(() => child.kill('SIGKILL'), this.options.installTimeoutSec * 1000);
      child.on('error', (err) => resolve({ ok: false, log: `${log}\n${err.message}` }));
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ ok: code === 0, log });
      });
    });
  }

}

/** Docker's multiplexed log format: 8-byte frame headers before each chunk. */
function demuxedText(buf: Buffer): string {
  const parts: Buffer[] = [];
  let i = 0;
  while (i + 8 <= buf.length) {
    const size = buf.readUInt32BE(i + 4);
    parts.push(buf.subarray(i + 8, i + 8 + size));
    i += 8 + size;
  }
  return Buffer.concat(parts).toString('utf8');
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join('\n');
}
