/**
 * What /metrics and OpenTelemetry cost per request: the same read scenarios on the same gateway
 * process, with both switched off and on in alternating rounds (so drift and warm caches hit
 * both sides alike). "On" is the production setup: MEMGATE_METRICS=1 and traces exported over
 * OTLP/HTTP, here to a sink in the runner that only counts what arrives.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad } from './http-load.js';
import { latency, median } from './stats.js';
import type { ReadScenario, ScenarioContext } from './scenarios/types.js';

export interface ObservabilityFigure {
  name: string;
  title: string;
  rounds: number;
  requestsPerRound: number;
  /** Medians over the rounds of each side. */
  off: Side;
  on: Side;
  /** (on − off) ÷ off, in percent, of the median latency and of the gateway CPU per request. */
  p50OverheadPct: number;
  cpuOverheadPct: number;
  /**
   * The same for the best (least CPU) round of each side: other load on the machine only ever
   * adds time, so the minimum is the steadier estimate of the intrinsic cost on a busy host.
   */
  bestCpuMsPerRequest: { off: number; on: number };
  bestCpuOverheadPct: number;
}

export interface OtlpSink {
  url: string;
  requests: number;
  bytes: number;
  close(): Promise<void>;
}

/** An OTLP/HTTP endpoint that accepts every export and keeps only the byte count. */
export async function startOtlpSink(): Promise<OtlpSink> {
  const sink = { requests: 0, bytes: 0 };
  const server: Server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      sink.bytes += chunk.length;
    });
    req.on('end', () => {
      sink.requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(sink, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
}

export const OBSERVED_SCENARIOS = ['entity', 'search', 'context'];

export async function measureObservability(
  scenarios: ReadScenario[],
  ctx: ScenarioContext,
  quick: boolean,
  log: (msg: string) => void,
): Promise<ObservabilityFigure[]> {
  const rounds = quick ? 6 : 10;
  const requests = quick ? 30 : 120;
  const figures: ObservabilityFigure[] = [];
  for (const scenario of scenarios.filter((s) => OBSERVED_SCENARIOS.includes(s.name))) {
    const body = (i: number) =>
      JSON.stringify({ query: scenario.document, variables: scenario.variables(ctx.ds, i) });
    const sides = { off: [] as Side[], on: [] as Side[] };
    for (let r = 0; r < rounds; r++) {
      for (const on of r % 2 === 0 ? [false, true] : [true, false]) {
        await ctx.gateway.observability(on);
        await runLoad({ url: ctx.gateway.url, concurrency: 1, requests: 5, maxMs: 10_000, body });
        const cpuBefore = (await ctx.gateway.memory()).cpuMs;
        // The same request indexes on both sides of a round: identical work.
        const result = await runLoad({
          url: ctx.gateway.url,
          concurrency: 1,
          requests,
          maxMs: 60_000,
          body: (i) => body(r * 7919 + i),
        });
        const cpuMs = (await ctx.gateway.memory()).cpuMs - cpuBefore;
        const l = latency(result.latencies);
        (on ? sides.on : sides.off).push({
          p50: l.p50,
          mean: l.mean,
          cpuMsPerRequest: cpuMs / Math.max(1, result.latencies.length),
        });
      }
    }
    await ctx.gateway.observability(false);
    const off = summarise(sides.off);
    const on = summarise(sides.on);
    const best = {
      off: Math.min(...sides.off.map((s) => s.cpuMsPerRequest)),
      on: Math.min(...sides.on.map((s) => s.cpuMsPerRequest)),
    };
    const figure: ObservabilityFigure = {
      name: scenario.name,
      title: scenario.title,
      rounds,
      requestsPerRound: requests,
      off,
      on,
      p50OverheadPct: percent(on.p50, off.p50),
      cpuOverheadPct: percent(on.cpuMsPerRequest, off.cpuMsPerRequest),
      bestCpuMsPerRequest: best,
      bestCpuOverheadPct: percent(best.on, best.off),
    };
    log(
      `  ${scenario.name} metrics+tracing: p50 ${off.p50.toFixed(2)} → ${on.p50.toFixed(2)} ms (${figure.p50OverheadPct.toFixed(1)}%), ` +
        `gateway CPU ${off.cpuMsPerRequest.toFixed(2)} → ${on.cpuMsPerRequest.toFixed(2)} ms/req (${figure.cpuOverheadPct.toFixed(1)}%), ` +
        `best rounds ${best.off.toFixed(2)} → ${best.on.toFixed(2)} ms/req (${figure.bestCpuOverheadPct.toFixed(1)}%)`,
    );
    figures.push(figure);
  }
  return figures;
}

export interface Side {
  p50: number;
  mean: number;
  cpuMsPerRequest: number;
}

function summarise(sides: Side[]): Side {
  return {
    p50: median(sides.map((s) => s.p50)),
    mean: median(sides.map((s) => s.mean)),
    cpuMsPerRequest: median(sides.map((s) => s.cpuMsPerRequest)),
  };
}

function percent(on: number, off: number): number {
  return off > 0 ? Math.round(((on - off) / off) * 1000) / 10 : 0;
}
