/**
 * The interpreter every package is resolved and installed for: the sandbox image's CPython on
 * x86-64 Linux (Debian bookworm: CPython 3.11, glibc 2.36). Resolution happens on the host, for
 * this target, so the host's own Python version never matters.
 */
export const PYTHON_TARGET = {
  /** `--python-version` for uv. */
  version: '3.11',
  /** `--python-platform` for uv: manylinux wheels up to the image's glibc. */
  platform: 'x86_64-manylinux_2_36',
  /** Part of every requirement set's key: a set installed for another target is another set. */
  tag: 'cp311-manylinux_2_36-x86_64',
} as const;
