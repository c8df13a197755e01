/**
 * Tools some integration tests drive besides the factory itself, installed by
 * `scripts/bootstrap.sh`: Debian's headless Chromium (rendering reports), Python's `datasets`
 * in `.tools/python` (loading exports) and radon in `.tools/radon` (cyclomatic complexity of the
 * class metrics). Each helper fails with what to run when its tool is missing.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type BrowserContext } from 'playwright-core';

const ROOT = path.resolve(__dirname, '../..');
export const PYTHON_TOOLS = path.join(ROOT, '.tools', 'python');
export const RADON_TOOLS = path.join(ROOT, '.tools', 'radon');
export const CHROMIUM = process.env.REPOST_CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags that keep a headless Chromium quiet and off the network in a container. */
const CHROMIUM_FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface HeadlessChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile folder, removed on close. */
export async function launchChromium(): Promise<HeadlessChromium> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: run scripts/bootstrap.sh (it installs Debian's chromium) or set REPOST_CHROMIUM_PATH`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS, viewport: { width: 1200, height: 900 } });
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Runs Python code with `datasets` importable, offline, with a throwaway Hugging Face cache; returns stdout. */
export async function runPythonWithDatasets(code: string, args: string[] = []): Promise<string> {
  if (!fs.existsSync(path.join(PYTHON_TOOLS, 'datasets', '__init__.py'))) throw new Error(`Python's datasets is not in ${PYTHON_TOOLS}: run scripts/bootstrap.sh`);
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-hf-'));
  try {
    const { stdout } = await promisify(execFile)('python3', ['-c', code, ...args], {
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, PYTHONPATH: PYTHON_TOOLS, HF_HOME: cache, HF_DATASETS_OFFLINE: '1', HF_HUB_OFFLINE: '1', HF_HUB_DISABLE_TELEMETRY: '1' },
    });
    return stdout;
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
}

export interface RadonMethod {
  /** The class's qualified name within its file (`Outer.Inner`). */
  class: string;
  method: string;
  /** Line of the `def`. */
  line: number;
  complexity: number;
}

/**
 * radon's cyclomatic complexity of every method of every class in some files of a folder
 * (test/support/radon_methods.py: radon parses them with Python's ast, nothing runs).
 */
export async function radonMethods(root: string, paths: string[]): Promise<{ methods: Record<string, RadonMethod[]>; errors: Record<string, string> }> {
  if (!fs.existsSync(path.join(RADON_TOOLS, 'radon', '__init__.py'))) throw new Error(`radon is not in ${RADON_TOOLS}: run scripts/bootstrap.sh --tests`);
  const child = execFile('python3', [path.join(__dirname, 'radon_methods.py')], {
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
    env: { ...process.env, PYTHONPATH: RADON_TOOLS, PYTHONDONTWRITEBYTECODE: '1' },
  });
  const done = new Promise<string>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`radon_methods.py exited with ${code}: ${err}`))));
  });
  child.stdin!.end(JSON.stringify({ root, paths }));
  return JSON.parse(await done);
}
