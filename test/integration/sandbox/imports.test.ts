/**
 * What a script gets installed: exactly the packages its own source imports, read with Python's
 * `ast` before the first run and installed in one resolution. A module name a script prints or
 * raises is never looked up on the index unless its source imports it.
 */
import type { SandboxExecutor } from '../../../activities/sandbox';
import { makeExecutor, testConfig } from './sandbox-env';

describe('imports', () => {
  let executor: SandboxExecutor;

  beforeAll(async () => {
    executor = await makeExecutor('pool', { workerId: `imports-${process.pid}` });
  });

  afterAll(async () => {
    await executor.close();
  });

  test('top-level, nested and guarded imports are installed in one resolution before the first run', async () => {
    const script = [
      'import yaml',
      'def helper():',
      '    from six.moves import range as r',
      '    return list(r(2))',
      'try:',
      '    import tomli_w',
      'except ImportError:',
      '    tomli_w = None',
      'from typing import TYPE_CHECKING',
      'if TYPE_CHECKING:',
      '    import pandas',
      'import sys',
      'if sys.version_info[0] == 2:',
      '    import urllib2',
      'print(yaml.safe_load("a: 1"), helper(), tomli_w is not None)',
    ].join('\n');
    const result = await executor.run({ script, install: true });
    expect(result.stderr).toBe('');
    expect(result.status).toBe('passed');
    expect(result.stdout.trim()).toBe("{'a': 1} [0, 1] True");
    // One set, found up front: no run failed on an import, nothing for TYPE_CHECKING or Python 2.
    expect(result.requirements).toEqual(['pyyaml', 'six', 'tomli-w']);
    expect(result.notes).toEqual([]);
  });

  test('a module name the script prints is never installed', async () => {
    const printed = await executor.run({
      script: 'import sys\nsys.stderr.write("ModuleNotFoundError: No module named \'six\'\\n")\nsys.exit(1)\n',
      install: true,
    });
    expect(printed.status).toBe('error');
    expect(printed.requirements).toEqual([]);
    expect(printed.packages).toEqual([]);
    expect(printed.notes.join('\n')).toMatch(/module six is missing; the script's source does not import it, so no package is installed for it/);

    // Nor a name it raises itself, or imports under a computed name.
    const raised = await executor.run({ script: 'raise ModuleNotFoundError("No module named \'six\'", name="six")\n', install: true });
    expect(raised.requirements).toEqual([]);
    const computed = await executor.run({ script: 'import importlib\nimportlib.import_module("".join(["s", "i", "x"]))\n', install: true });
    expect(computed.status).toBe('error');
    expect(computed.requirements).toEqual([]);
    expect(computed.notes.join('\n')).toMatch(/source does not import it/);
  });

  test('a module the source names only in importlib is installed when a run shows it missing', async () => {
    const result = await executor.run({ script: 'import importlib\nsix = importlib.import_module("six")\nprint(six.PY3)\n', install: true });
    expect(result.status).toBe('passed');
    expect(result.stdout.trim()).toBe('True');
    expect(result.requirements).toEqual(['six']);
    expect(result.notes).toEqual(['installed six for module six']);
  });

  test('resolutions are bounded by rounds, not by package count', async () => {
    const bounded = await makeExecutor('cold', { workerId: `imports-rounds-${process.pid}`, packages: { ...testConfig().packages, resolutionRounds: 1 } });
    try {
      // Five packages in the one round the scan allows; the sixth, found only by running, would need a second.
      const script = 'import yaml, six, tomli_w, idna, certifi\nimport importlib\nimportlib.import_module("attr")\n';
      const result = await bounded.run({ script, install: true });
      expect(result.requirements).toEqual(['certifi', 'idna', 'pyyaml', 'six', 'tomli-w']);
      expect(result.status).toBe('error');
      expect(result.notes.join('\n')).toMatch(/the limit of 1 resolution rounds per script is reached; running without attrs/);
      expect(result.notes.join('\n')).not.toMatch(/installed attrs/);
    } finally {
      await bounded.close();
    }
  });

  test("the standard library's optional modules are in the image: tkinter, venv, distutils", async () => {
    const result = await executor.run({ script: 'import tkinter, venv, distutils.util, sqlite3, ctypes\nprint(tkinter.TkVersion >= 8.6)\n', install: true });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('True');
    expect(result.requirements).toEqual([]);
  });
});
