/**
 * Gateway CPU per request, two builds side by side: starts the gateway process of this tree and
 * of another tree (MEMGATE_AB_OTHER=/path/to/tree) over the same kept database, then alternates
 * rounds of the same requests between them and reads each process's own CPU time per round.
 *
 *   DATABASE_URL=postgres://…/NAME npx tsx bench/cpu-ab.ts [--size L] [--only search,context] [--rounds 8] [--n 40]
 *
 * `--db-cpu` also reports the database's CPU per request: the CPU of every process of the
 * cluster over each round (one gateway is driven at a time), read from /proc, so the server
 * must run on this machine and serve nothing else that counts — a cluster of one's own.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { Dataset, SIZES, type SizeName } from './generate.js';
import type { GatewayProcess } from './gateway-process.js';
import { loadWordVectors } from '../src/providers/embedding-cache.js';
import { SCENARIOS } from './scenarios/index.js';
import type { ReadScenario } from './scenarios/types.js';
import { TextModel } from './text-model.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: 'L' },
    only: { type: 'string', default: 'search,context' },
    rounds: { type: 'string', default: '8' },
    n: { type: 'string', default: '40' },
    /** Write a CPU profile of each gateway's measured rounds per scenario into this directory. */
    profile: { type: 'string' },
    'db-cpu': { type: 'boolean', default: false },
  },
});
const url = process.env.DATABASE_URL!;
const cacheDir = process.env.MEMGATE_BENCH_CACHE_DIR ?? '.test-cache';
const words = await loadWordVectors({ dataDir: cacheDir });
const ds = new Dataset(SIZES[values.size!.toUpperCase() as SizeName], 42, new TextModel(words.words, 42));
const trees = [process.cwd(), ...(process.env.MEMGATE_AB_OTHER ? [process.env.MEMGATE_AB_OTHER] : [])];
const location = { backend: 'postgres' as const, url, name: new URL(url).pathname.slice(1) };
const gateways: { tree: string; gw: GatewayProcess }[] = [];
for (const tree of trees) {
  const mod = (await import(
    pathToFileURL(`${tree}/bench/gateway-process.ts`).href
  )) as typeof import('./gateway-process.js');
  gateways.push({ tree, gw: await mod.startGateway(location, cacheDir, { MEMGATE_MAX_DEPTH: '14' }) });
}
async function gql(gw: GatewayProcess, query: string, variables: unknown): Promise<void> {
  const res = await fetch(`${gw.url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { errors?: { message: string }[] };
  if (body.errors?.length) throw new Error(body.errors[0]!.message);
}
const n = Number(values.n);
/** User and system CPU ms of a process so far (Linux /proc, 10 ms ticks). */
function procCpu(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}
/** The postmaster of the database's cluster (its children are the backends and workers). */
async function postmasterPid(gw: GatewayProcess): Promise<number> {
  const [row] = await gw.query<{ dir: string }>(`SELECT current_setting('data_directory') AS dir`);
  return Number(readFileSync(`${row!.dir}/postmaster.pid`, 'utf8').split('\n')[0]);
}
/** CPU ms (user + system) of the postmaster and each of its children so far, by pid. */
function clusterCpu(postmaster: number): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      if (Number(entry) !== postmaster && Number(fields[1]) !== postmaster) continue;
      byPid.set(Number(entry), (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // Exited since the listing.
    }
  }
  return byPid;
}
/** CPU the cluster's processes used since `before`; a process that exited meanwhile is not counted. */
function clusterCpuSince(postmaster: number, before: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of clusterCpu(postmaster)) sum += ms - (before.get(pid) ?? 0);
  return sum;
}
const postmaster = values['db-cpu'] ? await postmasterPid(gateways[0]!.gw) : null;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const name of values.only!.split(',')) {
  const scenario = SCENARIOS.find((s): s is ReadScenario => s.kind === 'read' && s.name === name)!;
  const cpu = gateways.map(() => [] as number[]);
  const wall = gateways.map(() => [] as number[]);
  const system = gateways.map(() => 0);
  const db = gateways.map(() => [] as number[]);
  for (const { gw } of gateways)
    for (let w = 0; w < 30; w++) await gql(gw, scenario.document, scenario.variables(ds, w));
  if (values.profile) for (const { gw } of gateways) await gw.profileStart();
  for (let r = 0; r < Number(values.rounds); r++) {
    const order = r % 2 === 0 ? gateways.map((_, i) => i) : gateways.map((_, i) => i).reverse();
    for (const g of order) {
      const { gw } = gateways[g]!;
      const before = (await gw.memory()).cpuMs;
      const proc0 = procCpu(gw.pid);
      const db0 = postmaster === null ? null : clusterCpu(postmaster);
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await gql(gw, scenario.document, scenario.variables(ds, r * n + i));
      wall[g]!.push((performance.now() - t0) / n);
      cpu[g]!.push(((await gw.memory()).cpuMs - before) / n);
      if (postmaster !== null && db0) db[g]!.push(clusterCpuSince(postmaster, db0) / n);
      system[g]! += (procCpu(gw.pid).system - proc0.system) / n / Number(values.rounds);
    }
  }
  if (values.profile)
    for (const [g, { gw }] of gateways.entries())
      await gw.profileStop(`${values.profile}/${name}-${g}.cpuprofile`);
  for (const [g, { tree }] of gateways.entries()) {
    if (postmaster !== null)
      console.log(
        `${name.padEnd(8)} ${tree.padEnd(22)} db cpu ms/req median ${median(db[g]!).toFixed(2)}  [${db[g]!.map((c) => c.toFixed(2)).join(' ')}]`,
      );
    console.log(
      `${name.padEnd(8)} ${tree.padEnd(22)} cpu ms/req median ${median(cpu[g]!).toFixed(2)} min ${Math.min(...cpu[g]!).toFixed(2)}  system ${system[g]!.toFixed(2)}  wall ms/req median ${median(wall[g]!).toFixed(2)}  [${cpu[g]!.map((c) => c.toFixed(2)).join(' ')}]`,
    );
  }
}
for (const { tree, gw } of gateways) {
  const m = await gw.memory();
  console.log(
    `${tree}: heap ${(m.heapUsedBytes / 2 ** 20).toFixed(0)} MB, rss ${(m.rssBytes / 2 ** 20).toFixed(0)} MB`,
  );
  await gw.stop();
}
