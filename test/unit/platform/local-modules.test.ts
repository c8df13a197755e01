import { topLevelModules } from '../../../activities/sources/modules';

describe('topLevelModules', () => {
  it('names the packages and modules a script could import the repository by', () => {
    expect(topLevelModules(['textkit/__init__.py', 'textkit/clean.py', 'setup.py', 'src/pkg/core.py', 'scripts/run-me.py', 'tools/x.py'])).toEqual([
      'pkg',
      'scripts',
      'setup',
      'textkit',
      'tools',
    ]);
  });

  it('leaves out names Python cannot import', () => {
    expect(topLevelModules(['my-tool/main.py', '2fa.py', 'ok_name.py'])).toEqual(['ok_name']);
  });
});
