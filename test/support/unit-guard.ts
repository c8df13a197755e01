/**
 * What "unit" means here, enforced: a unit test runs in-process only. Starting a child process
 * (a tool, Python, another Node) or listening on a port (a server) fails the test with a message
 * saying where such a test belongs. The patches are undone after each file, so an integration
 * suite that jest runs in the same worker afterwards is not affected.
 */
// The modules themselves (not an import's namespace copy), so the patches reach every caller.
import childProcess = require('node:child_process');
import net = require('node:net');

const SPAWNERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

const saved = new Map<string, unknown>();
const savedListen = net.Server.prototype.listen;

function refuse(what: string): never {
  throw new Error(`a unit test may not ${what} (no servers, no child processes, no Python): it belongs in test/integration`);
}

// Patched now, before the test file loads (it may keep a reference, as `promisify(execFile)` does).
{
  const cp = childProcess as unknown as Record<string, unknown>;
  for (const name of SPAWNERS) {
    saved.set(name, cp[name]);
    cp[name] = (command: unknown) => refuse(`start a child process (${String(command)})`);
  }
  net.Server.prototype.listen = function listen(): never {
    return refuse('listen on a port');
  } as typeof net.Server.prototype.listen;
}

afterAll(() => {
  const cp = childProcess as unknown as Record<string, unknown>;
  for (const [name, fn] of saved) cp[name] = fn;
  net.Server.prototype.listen = savedListen;
});

// A unit test is quick, but on two cores shared with other work loading the BPE tokenizer alone
// (the statistics of a run) can take several seconds: a test fails on what it asserts, not on load.
jest.setTimeout(30_000);
