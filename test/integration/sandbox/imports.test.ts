/**
 * What a script gets installed: exactly the packages its own source imports, in any spelling that
 * names the module literally (import statements, importlib, __import__, the mock library's
 * patchers), read with Python's `ast` before the first run and installed in one resolution. A
 * module name a script prints, computes or raises is never looked up on the index.
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

  test('every literal spelling of an import is installed up front: importlib, __import__ and the mock patchers', async () => {
    const script = [
      'import importlib',
      'import unittest',
      'from unittest import mock',
      'from unittest.mock import patch as p',
      'import unittest.mock as um',
      'try:',
      '    import idna',
      'except ImportError:',
      '    idna = None',
      'tomli_w = importlib.import_module("tomli_w")',
      'certifi = __import__("certifi")',
      '# patch() imports the module before the last dot of its target.',
      'with p("six.PY2", "patched"):',
      '    import six',
      '    assert six.PY2 == "patched"',
      '# patch.dict() imports the module that holds the mapping.',
      'with mock.patch.dict("yaml.resolver.BaseResolver.yaml_implicit_resolvers", {}, clear=True):',
      '    import yaml',
      '    assert yaml.resolver.BaseResolver.yaml_implicit_resolvers == {}',
      '# patch.multiple() imports its target whole.',
      'with unittest.mock.patch.multiple("attr.validators", instance_of=mock.DEFAULT) as m:',
      '    import attr',
      '    assert attr.validators.instance_of is m["instance_of"]',
      '# patch.object() on an imported module: used unguarded here, so idna is required, not optional.',
      'with um.patch.object(idna, "encode", return_value=b"x"):',
      '    assert idna.encode("y") == b"x"',
      'print(tomli_w.dumps({"a": 1}).strip(), bool(certifi.where()))',
    ].join('\n');
    const result = await executor.run({ script, install: true });
    expect(result.stderr).toBe('');
    expect(result.status).toBe('passed');
    expect(result.stdout.trim()).toBe('a = 1 True');
    // One resolution before the first run: no run failed on a missing module, nothing installed late.
    expect(result.requirements).toEqual(['attrs', 'certifi', 'idna', 'pyyaml', 'six', 'tomli-w']);
    expect(result.notes).toEqual([]);
  });

  test("a patch target in the script itself, the standard library or a computed name is never looked up", async () => {
    const script = [
      'from unittest.mock import patch',
      'import os',
      'def helper():',
      '    return 1',
      'if __name__ == "__main__":',
      '    import eval_script',
      '    with patch("eval_script.helper", return_value=2), patch("__main__.helper", return_value=3), patch("os.getcwd", return_value="/x"):',
      '        assert eval_script.helper() == 2 and helper() == 3 and os.getcwd() == "/x"',
      '    target = "six" + ".PY2"',
      '    with patch(target, True):',
      '        pass',
    ].join('\n');
    const result = await executor.run({ script, install: true });
    expect(result.status).toBe('error');
    expect(result.exception?.type).toBe('ModuleNotFoundError');
    expect(result.requirements).toEqual([]);
    expect(result.packages).toEqual([]);
    expect(result.notes.join('\n')).toMatch(/module six is missing; the script's source does not import it/);
  });

  test('a patch that is not the mock library\'s, or patch.object on a name of the script, installs nothing', async () => {
    const script = [
      'import importlib',
      'from unittest import mock',
      'class Client:',
      '    def get(self):',
      '        return 1',
      'def patch(target):',
      '    return importlib.import_module(target.rsplit(".", 1)[0])',
      'with mock.patch.object(Client, "get", return_value=2):',
      '    assert Client().get() == 2',
      'print("import six")',
      'patch("six.moves")',
    ].join('\n');
    const result = await executor.run({ script, install: true });
    expect(result.status).toBe('error');
    expect(result.stdout.trim()).toBe('import six');
    expect(result.requirements).toEqual([]);
    expect(result.notes.join('\n')).toMatch(/module six is missing; the script's source does not import it/);
    expect(result.notes.join('\n')).not.toMatch(/Client/);
  });

  test('resolutions are bounded by rounds, not by package count', async () => {
    const bounded = await makeExecutor('cold', { workerId: `imports-rounds-${process.pid}`, packages: { ...testConfig().packages, resolutionRounds: 1 } });
    try {
      // Five packages and a name the index does not know, in the one round allowed: dropping the
      // unknown name would need a second round, so the script runs without any of them.
      const script = 'import yaml, six, tomli_w, idna, certifi\nimport repost_no_such_module_xyz\n';
      const result = await bounded.run({ script, install: true });
      expect(result.requirements).toEqual([]);
      expect(result.status).toBe('error');
      expect(result.notes.join('\n')).toMatch(/package repost_no_such_module_xyz not installed/);
      expect(result.notes.join('\n')).toMatch(/the limit of 1 resolution rounds per script is reached; running without (?=.*certifi)(?=.*idna)(?=.*PyYAML)(?=.*six)(?=.*tomli-w)/);
      // With a second round the five come in one resolution.
      const twice = await executor.run({ script, install: true });
      expect(twice.requirements).toEqual(['certifi', 'idna', 'pyyaml', 'six', 'tomli-w']);
      expect(twice.exception?.message).toMatch(/repost_no_such_module_xyz/);
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
