/**
 * torch installs from PyPI and imports CPU-only in the sandbox (slow the first time on a machine:
 * PyPI's Linux torch is a CUDA build whose libraries link the CUDA runtime, about 4 GB of wheels;
 * they land in the shared uv cache once and every later set holding torch hard-links them).
 */
import type { SandboxExecutor } from '../../../activities/sandbox';
import { makeExecutor, testConfig } from './sandbox-env';

test('torch imports and computes on the CPU in the sandbox', async () => {
  const executor: SandboxExecutor = await makeExecutor('cold', {
    workerId: `torch-${process.pid}`,
    memoryMb: 2048,
    timeoutSec: 120,
    packages: { ...testConfig().packages, installTimeoutSec: 1800 },
  });
  try {
    const script = [
      'import torch',
      'x = torch.arange(6, dtype=torch.float32).reshape(2, 3)',
      'print(torch.cuda.is_available(), (x @ x.T).tolist())',
    ].join('\n');
    const result = await executor.run({ script, install: true }, { heartbeat: () => undefined });
    expect(result.stderr.replace(/^.*UserWarning.*\n.*\n/m, '')).not.toMatch(/Error/);
    expect(result.status).toBe('passed');
    expect(result.stdout.trim()).toBe('False [[5.0, 14.0], [14.0, 50.0]]');
    expect(result.packages.map((p) => p.name)).toContain('torch');
    // GPU-only parts nothing imports are left out.
    expect(result.packages.map((p) => p.name)).not.toContain('triton');
  } finally {
    await executor.close();
  }
}, 1_800_000);
