/**
 * `npm run bench:startup`: how long `npm start` takes to serve, from the built JavaScript.
 * cold = an empty data folder (the database is created from the install-time template);
 * warm = the same folder again. Each figure is the time from spawning `node dist/main.js` to
 * /readyz answering 200 and to the first GraphQL answer; the median of --runs (default 3).
 * Figures only, nothing asserted; writes bench/results/startup.json and .md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = join(root, 'dist', 'main.js');

interface Timing {
  readyMs: number;
  firstAnswerMs: number;
  /** CPU time the gateway used until its first answer (user + system; Linux only). */
  cpuMs: number | null;
}

// Unlike wall time, CPU time does not grow when other processes compete for the cores.
function cpuMsOf(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in ticks.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function waitFor(url: string, init: RequestInit | undefined, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with code ${child.exitCode}`);
    try {
      const response = await fetch(url, init);
      if (response.ok) {
        const body = await response.text();
        if (!body.includes('"errors"')) return;
        throw new Error(`GraphQL answered with errors: ${body}`);
      }
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('GraphQL')) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function startOnce(dataDir: string): Promise<Timing> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, MEMGATE_DATA_DIR: dataDir, MEMGATE_PORT: String(port), MEMGATE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/readyz`, undefined, child);
    const readyMs = performance.now() - started;
    await waitFor(
      `${base}/graphql`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ entities(namespace: "demo", first: 1) { totalCount } }' }),
      },
      child,
    );
    return { readyMs, firstAnswerMs: performance.now() - started, cpuMs: cpuMsOf(child.pid) };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

function cpu(timings: Timing[]): number | null {
  const values = timings.map((t) => t.cpuMs).filter((v): v is number => v !== null);
  return values.length ? Math.round(median(values)) : null;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const runsFlag = process.argv.indexOf('--runs');
  const runs = runsFlag >= 0 ? Number(process.argv[runsFlag + 1]) : 3;
  if (!existsSync(entry))
    throw new Error('dist/main.js is missing: run `npm run prepare` (or `npm install`) first');
  const cold: Timing[] = [];
  const warm: Timing[] = [];
  for (let i = 0; i < runs; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'memgate-startup-'));
    try {
      cold.push(await startOnce(dataDir));
      warm.push(await startOnce(dataDir));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  const summary = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadAverage: loadavg()[0],
    runs,
    coldReadyMs: Math.round(median(cold.map((t) => t.readyMs))),
    coldFirstAnswerMs: Math.round(median(cold.map((t) => t.firstAnswerMs))),
    warmReadyMs: Math.round(median(warm.map((t) => t.readyMs))),
    warmFirstAnswerMs: Math.round(median(warm.map((t) => t.firstAnswerMs))),
    coldCpuMs: cpu(cold),
    warmCpuMs: cpu(warm),
  };
  const markdown = [
    `Start-up of \`node dist/main.js\` (${summary.date}, Node ${summary.node}, ${summary.cpus} cores, load ${summary.loadAverage.toFixed(2)}, median of ${runs}):`,
    '',
    '| start | /readyz ms | first GraphQL answer ms | gateway CPU ms |',
    '| --- | ---: | ---: | ---: |',
    `| cold (empty data folder) | ${summary.coldReadyMs} | ${summary.coldFirstAnswerMs} | ${summary.coldCpuMs ?? 'n/a'} |`,
    `| warm | ${summary.warmReadyMs} | ${summary.warmFirstAnswerMs} | ${summary.warmCpuMs ?? 'n/a'} |`,
    '',
  ].join('\n');
  process.stdout.write(markdown);
  const results = join(root, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(join(results, 'startup.json'), `${JSON.stringify(summary, null, 2)}\n`);
  writeFileSync(join(results, 'startup.md'), markdown);
}

await main();
