import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { App } from '../app.js';
import { type Authenticate, createTokenAuthenticator, localAuthenticate } from '../auth/authenticate.js';
import type { Config } from '../config.js';
import { DataDirLockedError, type LockHolder, folderHolder } from '../db/data-dir-lock.js';
import { embeddedFolder } from '../db/open-database.js';
import { type Logger, createLogger } from '../logger.js';
import { type GraphQLResult, type RunGraphQL, graphqlRunner } from './graphql-runner.js';
import { createMcpServer } from './server.js';

/** JSON-RPC's range for server-defined errors; the answer to an `initialize` this process refuses. */
const SERVER_REFUSED = -32000;

/**
 * `memgate mcp`: the MCP server on stdin/stdout for desktop agents and IDEs. The process opens
 * the database itself and acts as one principal: the holder of `token` (checked first), or the
 * local principal when no tokens file is configured.
 *
 * `initialize` and the tool list need no database, so they are answered at once; the database,
 * the embedder and the gateway open right after the handshake, and the first tool call waits
 * for them. What stops the process from serving (a wrong token, an embedded data folder held
 * by a running gateway) is said on stderr and as the error answering `initialize`, which the
 * client shows, rather than as a closed connection.
 */
export async function startStdioServer(config: Config, token: string | undefined): Promise<void> {
  const logger = createLogger(config.logLevel, (line) => process.stderr.write(line));
  const authorization = token ? `Bearer ${token}` : null;
  let authenticate: Authenticate;
  try {
    authenticate = config.tokensFile
      ? await createTokenAuthenticator(config.tokensFile, { logger })
      : localAuthenticate;
    // Before the database opens: a wrong or missing token costs nothing.
    await authenticate(
      new Request('http://memgate.local/mcp', { headers: authorization ? { authorization } : {} }),
    );
  } catch (error) {
    return refuse(`memgate mcp: ${(error as Error).message} (set MEMGATE_TOKEN)`, {
      code: 'UNAUTHENTICATED',
    });
  }
  const holder = config.databaseUrl ? undefined : folderHolder(embeddedFolder(config));
  if (holder) return refuse(folderInUse(embeddedFolder(config), holder), { code: 'UNAVAILABLE', holder });

  const app = lazyApp(config, logger, authenticate);
  const run: RunGraphQL = async (document, variables, operationName) => {
    let opened: App;
    try {
      opened = await app.open();
    } catch (error) {
      return unavailable(error, embeddedFolder(config));
    }
    return graphqlRunner(opened.gateway, authorization)(document, variables, operationName);
  };
  const server = createMcpServer(run);
  // Right after the handshake, so that the first tool call finds the database (nearly) open.
  server.oninitialized = () => {
    app.open().then(
      (opened) => logger.info('memgate mcp ready on stdio', { backend: opened.deps.db.backend }),
      (error: unknown) => process.stderr.write(`${unavailableMessage(error, embeddedFolder(config))}\n`),
    );
  };
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
}

/** The app, opened on first need; a failed opening is tried again by the next need. */
function lazyApp(config: Config, logger: Logger, authenticate: Authenticate) {
  let opening: Promise<App> | undefined;
  return {
    open(): Promise<App> {
      opening ??= import('../app.js')
        .then(({ createApp }) => createApp(config, { logger, authenticate }))
        .catch((error: unknown) => {
          opening = undefined;
          throw error;
        });
      return opening;
    },
    async close(): Promise<void> {
      const app = await opening?.catch(() => undefined);
      await app?.close();
    },
  };
}

/** Who holds the folder, and the way that works while it does. */
export function folderInUse(folder: string, holder: LockHolder): string {
  const who = `memgate process ${holder.pid} (${holder.command}, started ${holder.startedAt})`;
  const head = `memgate mcp: the data folder ${folder} is in use by ${who}, and one folder is opened by one process.`;
  if (holder.command !== 'memgate serve')
    return `${head} Wait for it to finish or stop it, then start memgate mcp again.`;
  const url = holder.url ?? 'http://HOST:PORT';
  return `${head} Use that gateway over HTTP instead: memgate mcp --url ${url} (or point the client at ${url}/mcp), or stop it first.`;
}

function unavailableMessage(error: unknown, folder: string): string {
  if (error instanceof DataDirLockedError) return folderInUse(folder, error.holder);
  return `memgate mcp: the database could not be opened: ${error instanceof Error ? error.message : String(error)}`;
}

/** A tool call while the database cannot be opened: the reason, as the tool's error. */
function unavailable(error: unknown, folder: string): GraphQLResult {
  return { errors: [{ message: unavailableMessage(error, folder), extensions: { code: 'UNAVAILABLE' } }] };
}

/**
 * Serves nothing but the reason it cannot serve: on stderr at once, and as the error answering
 * the client's first request (its `initialize`), after which the process exits.
 */
async function refuse(message: string, data: Record<string, unknown>): Promise<void> {
  process.stderr.write(`${message}\n`);
  const transport = new StdioServerTransport();
  const answer = (request: JSONRPCMessage) => {
    if (!('method' in request) || !('id' in request)) return; // notifications need no answer
    void transport
      .send({ jsonrpc: '2.0', id: request.id, error: { code: SERVER_REFUSED, message, data } })
      .finally(() => process.stdout.write('', () => process.exit(1)));
  };
  transport.onmessage = answer;
  transport.onclose = () => process.exit(1);
  process.stdin.on('end', () => process.exit(1));
  await transport.start();
}
