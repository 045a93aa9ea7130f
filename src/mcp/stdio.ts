import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createApp } from '../app.js';
import { createTokenAuthenticator, localAuthenticate } from '../auth/authenticate.js';
import type { Config } from '../config.js';
import { createLogger } from '../logger.js';
import { graphqlRunner } from './graphql-runner.js';
import { createMcpServer } from './server.js';

/**
 * `memgate mcp`: the MCP server on stdin/stdout for desktop agents and IDEs. The process opens
 * the database itself and acts as one principal: the holder of `token` (checked now, so a wrong
 * or missing token stops start-up), or the local principal when no tokens file is configured.
 */
export async function startStdioServer(config: Config, token: string | undefined): Promise<void> {
  const logger = createLogger(config.logLevel, (line) => process.stderr.write(line));
  const authenticate = config.tokensFile
    ? await createTokenAuthenticator(config.tokensFile, { logger })
    : localAuthenticate;
  const authorization = token ? `Bearer ${token}` : null;
  try {
    // Before the database opens: a wrong or missing token costs nothing.
    await authenticate(
      new Request('http://memgate.local/mcp', { headers: authorization ? { authorization } : {} }),
    );
  } catch (error) {
    throw new Error(`memgate mcp: ${(error as Error).message} (set MEMGATE_TOKEN)`);
  }
  const app = await createApp(config, { logger, authenticate });
  const server = createMcpServer(graphqlRunner(app.gateway, authorization));
  let closing = false;
  const close = () => {
    if (closing) return;
    closing = true;
    void server
      .close()
      .then(() => app.close())
      .finally(() => process.exit(0));
  };
  const transport = new StdioServerTransport();
  transport.onclose = close;
  process.stdin.on('end', close);
  process.on('SIGTERM', close);
  process.on('SIGINT', close);
  await server.connect(transport);
  logger.info('memgate mcp ready on stdio', { backend: app.deps.db.backend });
}
