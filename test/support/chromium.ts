/**
 * Rendering a local page in headless Chromium (Debian's `chromium`, installed by bootstrap.sh;
 * `REPOST_CHROMIUM` names another binary): a screenshot, or the DOM after scripts ran. Each call
 * gets a fresh profile, and a dead proxy so a page reaching for the network gets nothing.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export function chromiumBinary(): string {
  const bin = process.env.REPOST_CHROMIUM ?? 'chromium';
  const found = spawnSync('sh', ['-c', `command -v ${JSON.stringify(bin)}`], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error(`${bin} is not installed: run scripts/bootstrap.sh (it installs Debian's chromium) or set REPOST_CHROMIUM`);
  return found.stdout.trim();
}

function run(args: string[], profile: string): string {
  const r = spawnSync(
    chromiumBinary(),
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--hide-scrollbars',
      '--proxy-server=127.0.0.1:9',
      `--user-data-dir=${profile}`,
      ...args,
    ],
    { encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 },
  );
  if (r.status !== 0) throw new Error(`chromium failed (exit ${r.status ?? r.signal}): ${(r.stderr ?? '').slice(-2000)}`);
  return r.stdout;
}

export function screenshot(htmlFile: string, size: { width: number; height: number }): Buffer {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-chromium-'));
  const png = path.join(profile, 'shot.png');
  try {
    run([`--screenshot=${png}`, `--window-size=${size.width},${size.height}`, `file://${path.resolve(htmlFile)}`], profile);
    return fs.readFileSync(png);
  } finally {
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

export function dumpDom(htmlFile: string): string {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'repost-chromium-'));
  try {
    return run(['--dump-dom', `file://${path.resolve(htmlFile)}`], profile);
  } finally {
    fs.rmSync(profile, { recursive: true, force: true });
  }
}
