/** Unit tests exercise pure domain code in-process (no servers, no child processes, no Python);
 * integration tests use the real Temporal dev server, the real Docker engine, PostgreSQL and a
 * scripted OpenAI-compatible HTTP server. */
const transform = { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] };
module.exports = {
  // Two cores: integration suites share one Docker engine and are heavy, so they run one at a time.
  maxWorkers: 2,
  projects: [
    // In-process only: test/support/unit-guard.ts fails a unit test that starts a process or a server.
    { displayName: 'unit', testEnvironment: 'node', transform, testMatch: ['<rootDir>/test/unit/**/*.test.ts'], setupFilesAfterEnv: ['<rootDir>/test/support/unit-guard.ts'] },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/support/integration-timeout.ts'],
    },
  ],
};
