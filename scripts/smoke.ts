/**
 * Smoke run of the built gateway under whichever Node runs this script (CI uses it for Node 24:
 * `<node24> --import tsx scripts/smoke.ts`): start `dist/main.js` on an empty data folder, run
 * the README tour (its GraphQL and curl examples, in order), then ask for context. Exits
 * non-zero on the first failure.
 *
 * Against a gateway that is already running (scripts/ci-containers.sh: a container's published
 * port), with MEMGATE_TOKEN as the bearer token when the gateway has a tokens file:
 *   node --import tsx scripts/smoke.ts --url http://127.0.0.1:4000                  the tour, then context
 *   node --import tsx scripts/smoke.ts --url http://127.0.0.1:4000 --context-only   context only: the
 *     tour's data must still be there (after a restart, or on a new container over the same volume)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DocSession, allExamples, runExample } from './doc-examples.js';

const root = fileURLToPath(new URL('..', import.meta.url));

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

async function waitReady(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the gateway exited with code ${child.exitCode}`);
    const ok = await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the gateway was not ready within 60 s');
}

const CONTEXT_QUERY = `query {
  context(input: { namespaces: ["demo"], query: "What does Alice do?", anchors: ["alice"], budgetTokens: 800 }) {
    tokenEstimate
    sections { kind items { kind title } }
  }
}`;

/** The README tour (unless `contextOnly`), then a context query that must find the tour's data. */
async function runTour(base: string, options: { contextOnly: boolean; token?: string }): Promise<string> {
  const tour = options.contextOnly ? [] : allExamples(root, ['README.md']);
  const session = new DocSession(`${base}/graphql`, options.token);
  for (const example of tour) await session.run(example);
  const context = await runExample(
    { kind: 'graphql', file: 'scripts/smoke.ts', line: 0, text: CONTEXT_QUERY },
    `${base}/graphql`,
    options.token,
  );
  const pack = (context.data as { context?: { sections: { items: unknown[] }[] } } | undefined)?.context;
  const items = pack?.sections.flatMap((section) => section.items) ?? [];
  if (!items.length) throw new Error(`context returned no items: ${JSON.stringify(context)}`);
  return options.contextOnly
    ? `a context query (${items.length} items) answered`
    : `${tour.length} README examples and a context query (${items.length} items) answered`;
}

async function againstRunning(base: string, contextOnly: boolean): Promise<void> {
  const ok = await fetch(`${base}/readyz`).then(
    (r) => r.ok,
    () => false,
  );
  if (!ok) throw new Error(`${base}/readyz is not ok`);
  const token = process.env.MEMGATE_TOKEN || undefined;
  process.stdout.write(`smoke against ${base}: ${await runTour(base, { contextOnly, token })}\n`);
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'memgate-smoke-'));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, 'dist', 'main.js')], {
    env: { ...process.env, MEMGATE_DATA_DIR: dataDir, MEMGATE_PORT: String(port), MEMGATE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitReady(base, child);
    const ready = performance.now() - started;
    const answered = await runTour(base, { contextOnly: false });
    process.stdout.write(
      `smoke on Node ${process.version}: ready in ${(ready / 1000).toFixed(1)} s, ${answered}\n`,
    );
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const urlAt = args.indexOf('--url');
if (urlAt >= 0) {
  const url = args[urlAt + 1];
  if (!url) throw new Error('--url needs the gateway base URL, e.g. http://127.0.0.1:4000');
  await againstRunning(url.replace(/\/+$/, ''), args.includes('--context-only'));
} else {
  await main();
}
