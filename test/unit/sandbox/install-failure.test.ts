import { DownloadTracker, classifyUvError, isPermanent, timeoutFailure } from '../../../activities/sandbox/install-failure';

// uv 0.13's own words, as printed for these requests.
const NO_WHEEL = `error: No solution found when resolving dependencies
  cause: Because all versions of docopt have no usable wheels and you require docopt, we can conclude that your requirements are unsatisfiable.

hint: Wheels are required for \`docopt\` because building from source is disabled for all packages (i.e., with \`--no-build\`)`;
const PLATFORM = `error: No solution found when resolving dependencies
  cause: Because pywin32<=302 has no wheels with a matching Python ABI tag (e.g., \`cp311\`) and only the following versions of pywin32 are available:
             pywin32<=302
             pywin32>=303
         we can conclude that pywin32<303 cannot be used.
         And because pywin32>=303 has no wheels with a matching platform tag (e.g., \`manylinux_2_36_x86_64\`) and you require pywin32, we can conclude that your requirements are unsatisfiable.`;
const NOT_FOUND = `error: No solution found when resolving dependencies
  cause: Because repost-no-such-distribution-xyz was not found in the package registry and you require repost-no-such-distribution-xyz, we can conclude that your requirements are unsatisfiable.`;
const CONFLICT = `error: No solution found when resolving dependencies
  cause: Because only numpy>=1.3.0 is available and you require numpy<1.0, we can conclude that your requirements are unsatisfiable.`;
const PYTHON = `error: No solution found when resolving dependencies
  cause: Because the requested Python version (>=3.11) does not satisfy Python>=3.12 and django==6.0 depends on Python>=3.12, we can conclude that django==6.0 cannot be used.
         And because you require django==6.0, we can conclude that your requirements are unsatisfiable.`;
const NETWORK = `error: Request failed after 3 retries in 9.8s
  cause: Failed to fetch: http://127.0.0.1:9/simple/six/
  cause: error sending request for url (http://127.0.0.1:9/simple/six/)
  cause: Connection refused (os error 111)`;

describe('uv failures in words', () => {
  test.each([
    [NO_WHEEL, 'no-wheel', ['docopt']],
    [PLATFORM, 'no-wheel', ['pywin32']],
    [NOT_FOUND, 'not-found', ['repost-no-such-distribution-xyz']],
    [CONFLICT, 'conflict', ['numpy']],
    [PYTHON, 'conflict', ['django']],
    [NETWORK, 'network', []],
    ['error: failed to write to file: No space left on device (os error 28)', 'disk', []],
  ])('%#: %s', (stderr, kind, packages) => {
    const f = classifyUvError(stderr);
    expect(f.kind).toBe(kind);
    expect(f.packages).toEqual(packages);
    for (const p of packages) expect(f.message).toContain(p);
  });

  test('only no-wheel, not-found, conflict and failed builds are permanent', () => {
    expect(isPermanent(classifyUvError(NO_WHEEL))).toBe(true);
    expect(isPermanent(classifyUvError(CONFLICT))).toBe(true);
    expect(isPermanent(classifyUvError(NETWORK))).toBe(false);
    expect(isPermanent(timeoutFailure(600, 'resolution', []))).toBe(false);
  });

  test('a time limit names the downloads still running', () => {
    const t = new DownloadTracker();
    for (const l of ['Downloading numpy (16.1MiB)', 'Downloading torch (539.0MiB)', ' Downloaded numpy']) t.line(l);
    const f = timeoutFailure(600, 'the download', t.inFlight);
    expect(f).toEqual({ kind: 'timeout', packages: ['torch'], message: 'the install time limit of 600s was reached while downloading torch (539.0MiB)' });
  });
});
