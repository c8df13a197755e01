/**
 * On a Temporal server the factory did not start, its search attributes are registered when
 * missing (the workflows set them; without them every function would fail).
 */
import { spawn } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { ensureSearchAttributes } from '../../scripts/lib/stack';
import { freePort, resolveTemporalCli } from '../../scripts/lib/temporal-server';
import { SEARCH_ATTRIBUTES } from '../../workflows/search-attributes';
import { waitFor } from '../support/processes';

describe('search attributes on an existing Temporal server', () => {
  it('are registered when missing, once', async () => {
    const port = await freePort();
    // A plain dev server, started without the factory's search attributes.
    const server = spawn(resolveTemporalCli(process.env.REPOST_TEMPORAL_CLI_PATH), ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--headless', '--log-level', 'error'], { stdio: 'ignore' });
    try {
      const connection = await waitFor('the server', () => Connection.connect({ address: `127.0.0.1:${port}`, connectTimeout: 1000 }).catch(() => undefined), 60_000);
      try {
        await waitFor('the namespace', () => connection.operatorService.listSearchAttributes({ namespace: 'default' }).then(() => true, () => false), 60_000);
        const logged: string[] = [];
        await ensureSearchAttributes(connection, 'default', (l) => logged.push(l));
        expect(logged).toEqual([`registered the search attributes ${Object.keys(SEARCH_ATTRIBUTES).join(', ')} in namespace default`]);
        const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
        for (const name of Object.keys(SEARCH_ATTRIBUTES)) expect(customAttributes).toHaveProperty(name);
        // A second start finds them there and changes nothing.
        await ensureSearchAttributes(connection, 'default', (l) => logged.push(l));
        expect(logged).toHaveLength(1);
      } finally {
        await connection.close();
      }
    } finally {
      server.kill('SIGTERM');
    }
  });
});
