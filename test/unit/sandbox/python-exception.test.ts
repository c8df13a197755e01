import { missingModuleName, parsePythonException } from '../../../activities/sandbox/python-exception';

describe('parsePythonException', () => {
  test('reads type, message and traceback of an uncaught exception', () => {
    const stderr = [
      'some warning printed first',
      'Traceback (most recent call last):',
      '  File "/scratch/run-1/eval_script.py", line 3, in <module>',
      '    foo()',
      '  File "/scratch/run-1/eval_script.py", line 2, in foo',
      '    raise ValueError("bad\\nvalue")',
      'ValueError: bad',
      'value',
    ].join('\n');
    const e = parsePythonException(stderr)!;
    expect(e.type).toBe('ValueError');
    expect(e.message).toBe('bad\nvalue');
    expect(e.traceback.startsWith('Traceback (most recent call last):')).toBe(true);
    expect(e.traceback.endsWith('ValueError: bad\nvalue')).toBe(true);
  });

  test('with chained exceptions the last one wins', () => {
    const stderr = [
      'Traceback (most recent call last):',
      '  File "x.py", line 1, in <module>',
      'KeyError: \'a\'',
      '',
      'During handling of the above exception, another exception occurred:',
      '',
      'Traceback (most recent call last):',
      '  File "x.py", line 3, in <module>',
      'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)',
    ].join('\n');
    expect(parsePythonException(stderr)).toMatchObject({ type: 'json.decoder.JSONDecodeError', message: 'Expecting value: line 1 column 1 (char 0)' });
  });

  test('an assertion without a message', () => {
    const stderr = 'Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n    assert f() == g()\n           ^^^^^^^^^^\nAssertionError\n';
    expect(parsePythonException(stderr)).toMatchObject({ type: 'AssertionError', message: '' });
  });

  test('a syntax error has no traceback header', () => {
    const stderr = '  File "/scratch/run-1/eval_script.py", line 2\n    def f(:\n          ^\nSyntaxError: invalid syntax\n';
    const e = parsePythonException(stderr)!;
    expect(e.type).toBe('SyntaxError');
    expect(e.message).toBe('invalid syntax');
    expect(e.traceback).toContain('line 2');
  });

  test('unittest output: the traceback between rule lines', () => {
    const stderr = [
      'F',
      '======================================================================',
      'FAIL: test_x (__main__.T.test_x)',
      '----------------------------------------------------------------------',
      'Traceback (most recent call last):',
      '  File "x.py", line 5, in test_x',
      '    self.assertEqual(1, 2)',
      'AssertionError: 1 != 2',
      '',
      '----------------------------------------------------------------------',
      'Ran 1 test in 0.001s',
      '',
      'FAILED (failures=1)',
    ].join('\n');
    expect(parsePythonException(stderr)).toMatchObject({ type: 'AssertionError', message: '1 != 2' });
  });

  test('nothing to find', () => {
    expect(parsePythonException('')).toBeNull();
    expect(parsePythonException('just some log line\nanother')).toBeNull();
  });
});

describe('missingModuleName', () => {
  test('ModuleNotFoundError names the top-level module', () => {
    const e = parsePythonException("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nModuleNotFoundError: No module named 'google.protobuf'\n");
    expect(missingModuleName(e, '')).toBe('google');
  });

  test('old-style ImportError', () => {
    expect(missingModuleName(null, 'ImportError: No module named yaml')).toBe('yaml');
  });

  test('other import errors are not a missing module', () => {
    const e = parsePythonException("Traceback (most recent call last):\nImportError: cannot import name 'x' from 'y'\n");
    expect(missingModuleName(e, '')).toBeNull();
  });
});
