import { extractCandidate } from '../../../activities/eval/candidate';
import { candidateScript, insertPreamble } from '../../../activities/eval/candidate-script';
import { harnessCause, placementBroke, placementFailure, recordNames } from '../../../activities/eval/harness';
import { harnessOutcome, MODEL_FAILURE_KINDS } from '../../../activities/eval/outcome';
import type { SandboxResult } from '../../../activities/sandbox/schema';

/** A script standing in for a repository whose `logic/log.py` provides LOG. */
const SCRIPT = [
  'import re',
  'from typing import List',
  '',
  'class Logger:',
  '    def info(self, msg):',
  '        return msg',
  '',
  'LOG = Logger()',
  '',
  'def shout(text):',
  '    LOG.info(text)',
  '    return text.upper()',
  '',
  'def test_shout():',
  '    assert shout("a") == shout_new_implementation("a")',
  '',
  'if __name__ == "__main__":',
  '    test_shout()',
  '',
].join('\n');

const RECORD = {
  path: 'logic/handlers.py',
  context: '## logic/log.py\nclass Logger:\n    def info(self, msg):\n        return msg\n\nLOG = Logger()\n\n## logic/handlers.py\nfrom logic.log import LOG\nfrom .helpers import cap\n\ndef shout(text):\n    ...\n',
};
const names = recordNames(RECORD);
const ORIG = 'def shout(text):\n    LOG.info(text)\n    return text.upper()\n';

function placed(answer: string) {
  const c = extractCandidate(answer, { qualname: 'shout', origFunc: ORIG });
  if (!c.ok) throw new Error(c.detail);
  return candidateScript(SCRIPT, c, 'shout', names);
}

function result(over: Partial<SandboxResult>): SandboxResult {
  return { status: 'error', exitCode: 1, durationMs: 5, stdout: '', stderr: '', truncated: false, exception: null, coverage: null, packages: [], requirements: [], notes: [], ...over };
}

describe("the repository's own names in a candidate's preamble", () => {
  it('knows the repository by its paths and the names its prompt shows', () => {
    expect([...names.ownModules]).toEqual(['logic']);
    expect(names.promised.has('LOG')).toBe(true);
    expect(names.promised.has('Logger')).toBe(true);
    expect(names.promised.has('cap')).toBe(true);
  });

  it('leaves out an import of a repository module whose names the script defines, and says so', () => {
    const out = placed('```python\nfrom logic.log import LOG\nimport math\n\ndef shout(text):\n    LOG.info(text)\n    return text.upper()\n```');
    expect(out.script).not.toContain('from logic.log import LOG');
    expect(out.script.startsWith('import math\n')).toBe(true);
    expect(out.dropped).toEqual(["from logic.log import LOG: left out LOG (the script defines it)"]);
    expect(out.unresolved).toEqual([]);
  });

  it("never rebinds a name the script defines; the standard library and third-party packages stay", () => {
    const out = insertPreamble(SCRIPT, 'import re\nimport numpy as np\nfrom typing import List, Dict\nimport os.path\nLOG_LEVEL = 1', names);
    expect(out.script).toContain('import numpy as np\n');
    expect(out.script).toContain('from typing import Dict\n');
    expect(out.script).toContain('import os.path\n');
    expect(out.script.match(/^import re$/gm)).toHaveLength(1);
    // The script's own `import re` is already there: nothing is left out, nothing reported.
    expect(out.dropped).toEqual(['from typing import List, Dict: left out List (the script defines it)']);
  });

  it('keeps `import a.b` beside the script\'s own `import a`: the same module, with its submodule loaded', () => {
    const out = insertPreamble('import os\n\nx = os.sep\n', 'import os.path', names);
    expect(out.script).toBe('import os.path\n\nimport os\n\nx = os.sep\n');
    expect(out.dropped).toEqual([]);
  });

  it('leaves out relative imports and names the script lacks, which it lists as unresolved', () => {
    const out = insertPreamble(SCRIPT, 'from .helpers import cap\nfrom logic.util import slug as s, LOG\nimport logic.extra\nfrom logic import *', names);
    expect(out.script).toBe(SCRIPT);
    expect(out.unresolved).toEqual(['cap', 's', 'logic']);
    expect(out.dropped).toHaveLength(4);
    expect(out.dropped[1]).toBe("from logic.util import slug as s, LOG: left out s (from the repository's own modules, which the script replaces), LOG (the script defines it)");
  });
});

describe('failures the harness caused', () => {
  const placement = { unresolved: ['cap'], scriptNames: new Set(['re', 'List', 'Logger', 'LOG', 'shout', 'test_shout']) };
  const exc = (type: string, message: string) => result({ exception: { type, message, traceback: '' }, stderr: `${type}: ${message}\n` });

  it("puts a missing repository module, a relative import and a promised name the script lacks down to the harness", () => {
    expect(harnessCause(exc('ModuleNotFoundError', "No module named 'logic'"), names, placement)).toMatch(/repository's module logic is not part of the evaluation script/);
    expect(harnessCause(exc('ImportError', 'attempted relative import with no known parent package'), names, placement)).toMatch(/repository's package/);
    expect(harnessCause(exc('NameError', "name 'cap' is not defined"), names, placement)).toMatch(/imports cap from the repository/);
    expect(harnessCause(exc('NameError', "name 'Logger2' is not defined"), { ...names, promised: new Set(['Logger2']) }, placement)).toMatch(/shows Logger2 as available/);
  });

  it("leaves the model's own failures to the model", () => {
    expect(harnessCause(exc('ModuleNotFoundError', "No module named 'requests_extra'"), names, placement)).toBeNull();
    expect(harnessCause(exc('NameError', "name 'undefined_thing' is not defined"), names, placement)).toBeNull();
    // A name the script defines is there: a NameError on it is not about the repository.
    expect(harnessCause(exc('NameError', "name 'LOG' is not defined"), names, placement)).toBeNull();
    expect(harnessCause(result({ status: 'failed', exception: { type: 'AssertionError', message: '', traceback: '' } }), names, placement)).toBeNull();
    expect(harnessCause(result({ status: 'passed', exitCode: 0 }), names, placement)).toBeNull();
  });

  it('tells a candidate that does not parse from one the harness could not place', () => {
    expect(placementFailure('def shout(text:\n    return 1', '', SCRIPT, 'no function')).toBeNull();
    expect(placementFailure('def shout(text):\n    return 1', '', SCRIPT, 'the original function is named x')).toMatch(/^the harness could not place the candidate/);
    expect(placementBroke('def f(:\n', 'def shout(t):\n    return t', '', SCRIPT)).toBe(true);
    expect(placementBroke(SCRIPT, 'def shout(t):\n    return t', '', SCRIPT)).toBe(false);
  });

  it('is a kind of its own, apart from the kinds that are the model\'s', () => {
    expect(harnessOutcome('the harness could not place it')).toEqual({ passed: false, kind: 'harness', exceptionType: null, summary: 'the harness could not place it' });
    expect(MODEL_FAILURE_KINDS).not.toContain('harness');
  });
});
