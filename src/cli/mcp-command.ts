import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import { UsageError, parseArgs } from './args.js';

const USAGE = `Usage: memgate mcp [--url URL [--token TOKEN]]   (Model Context Protocol over stdin/stdout)

Without --url the process opens the database itself (DATABASE_URL, or the embedded one in
MEMGATE_DATA_DIR, which one process at a time may hold). With MEMGATE_TOKENS_FILE set,
MEMGATE_TOKEN must hold the bearer token of the principal the agent acts as; without a tokens
file the server is the local full-access principal.

  --url URL      relay to a running gateway's /mcp instead (e.g. http://127.0.0.1:4000): the way
                 to reach an embedded database while that gateway holds it
  --token TOKEN  bearer token for --url (default: MEMGATE_TOKEN)

Logs go to stderr: stdout carries the protocol.`;

registerCommand('mcp', {
  summary:
    'serve the MCP tools over stdio (--url relays to a running gateway; MEMGATE_TOKEN picks the principal)',
  async run(args) {
    if (args.includes('--help') || args.includes('-h')) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    let url: string | undefined;
    let token = process.env.MEMGATE_TOKEN;
    try {
      const { positional, options } = parseArgs(args, ['url', 'token']);
      if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
      for (const name of options.keys()) {
        if (name !== 'url' && name !== 'token') throw new UsageError(`unknown option --${name}`);
      }
      const [rawUrl, rawToken] = [options.get('url'), options.get('token')];
      if (rawUrl === true || rawToken === true) throw new UsageError('--url and --token need a value');
      if (rawToken !== undefined && rawUrl === undefined) throw new UsageError('--token goes with --url');
      url = rawUrl;
      token = rawToken ?? token;
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    if (url !== undefined) {
      const { mcpEndpoint, startStdioProxy } = await import('../mcp/stdio-proxy.js');
      await startStdioProxy(mcpEndpoint(url), token);
      return -1; // runs until stdin closes
    }
    const { startStdioServer } = await import('../mcp/stdio.js');
    await startStdioServer(parseConfig(process.env), token);
    return -1; // runs until stdin closes
  },
});
