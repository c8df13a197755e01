import type { PostgresServer } from '../../scripts/lib/postgres-server';
import type { DevServer } from '../../scripts/lib/temporal-server';

export default async function globalTeardown(): Promise<void> {
  const globals = globalThis as Record<string, unknown>;
  const server = globals.__REPOST_TEMPORAL__ as DevServer | undefined;
  const postgres = globals.__REPOST_POSTGRES__ as PostgresServer | undefined;
  try {
    await server?.stop();
  } finally {
    await postgres?.stop();
  }
}
