import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';

const USAGE = `Usage: memgate mcp   (Model Context Protocol over stdin/stdout)

With MEMGATE_TOKENS_FILE set, MEMGATE_TOKEN must hold the bearer token of the principal the
agent acts as; without a tokens file the server is the local full-access principal. Logs go to
stderr: stdout carries the protocol.`;

registerCommand('mcp', {
  summary: 'serve the MCP tools over stdio (MEMGATE_TOKEN picks the principal when tokens are on)',
  async run(args) {
    if (args.includes('--help') || args.includes('-h')) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (args.length > 0) {
      process.stderr.write(`unexpected argument ${args[0]}\n${USAGE}\n`);
      return 2;
    }
    const { startStdioServer } = await import('../mcp/stdio.js');
    await startStdioServer(parseConfig(process.env), process.env.MEMGATE_TOKEN);
    return -1; // runs until stdin closes
  },
});
