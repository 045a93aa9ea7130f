/**
 * `npm run bench:mcp-startup`: how long `memgate mcp` (the built CLI, as `npx memgate mcp`
 * runs it) takes to answer a client: from spawning it to the `initialize` response through the
 * SDK's StdioClientTransport, then to the answer of a first tool call (which waits for the
 * database). On a warm embedded data folder (created once from the template, then reused),
 * median of --runs (default 5), with the machine's load average (as `uptime` prints it) before
 * and after. Figures only, nothing asserted; writes bench/results/mcp-startup.json and .md.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'dist', 'cli.js');

interface Timing {
  initializeMs: number;
  firstToolMs: number;
}

async function startOnce(dataDir: string): Promise<Timing> {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, 'mcp'],
    env: { PATH: process.env.PATH ?? '', MEMGATE_DATA_DIR: dataDir, MEMGATE_LOG_LEVEL: 'warn' },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  try {
    // connect() sends initialize and resolves on its response (then notifies `initialized`).
    await client.connect(transport);
    const initializeMs = performance.now() - started;
    const answer = await client.callTool({ name: 'get_entity', arguments: { namespace: 'demo', key: 'x' } });
    if (!answer.isError) throw new Error('expected NOT_FOUND for an empty database');
    return { initializeMs, firstToolMs: performance.now() - started };
  } finally {
    await client.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]!);
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

async function main(): Promise<void> {
  const runsFlag = process.argv.indexOf('--runs');
  const runs = runsFlag >= 0 ? Number(process.argv[runsFlag + 1]) : 5;
  if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run `npm run build` first');
  const dataDir = mkdtempSync(join(tmpdir(), 'memgate-mcp-startup-'));
  const loadBefore = load();
  const timings: Timing[] = [];
  try {
    await startOnce(dataDir); // creates the database from the template: not counted
    for (let i = 0; i < runs; i++) timings.push(await startOnce(dataDir));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const summary = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadBefore,
    loadAfter: load(),
    runs,
    initializeMs: median(timings.map((t) => t.initializeMs)),
    firstToolMs: median(timings.map((t) => t.firstToolMs)),
    initializeRangeMs: [
      Math.round(Math.min(...timings.map((t) => t.initializeMs))),
      Math.round(Math.max(...timings.map((t) => t.initializeMs))),
    ],
  };
  const markdown = [
    `Start-up of \`memgate mcp\` (\`node dist/cli.js mcp\`, warm embedded data folder; ${summary.date}, Node ${summary.node}, ${summary.cpus} cores, load average ${summary.loadBefore} before, ${summary.loadAfter} after; median of ${runs}):`,
    '',
    '| from spawn to | ms |',
    '| --- | ---: |',
    `| the initialize response | ${summary.initializeMs} (${summary.initializeRangeMs.join('–')}) |`,
    `| the first tool answer (database open) | ${summary.firstToolMs} |`,
    '',
  ].join('\n');
  process.stdout.write(markdown);
  const results = join(root, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(join(results, 'mcp-startup.json'), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(join(results, 'mcp-startup.md'), markdown);
}

await main();
