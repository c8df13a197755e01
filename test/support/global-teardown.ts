import type { DevServer } from '../../scripts/lib/temporal-server';

export default async function globalTeardown(): Promise<void> {
  const server = (globalThis as Record<string, unknown>).__REPOST_TEMPORAL__ as DevServer | undefined;
  await server?.stop();
}
