/** Parent side of the gateway process: start it, ask it things over IPC, stop it. */
import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CaptureSummary } from './capture.js';
import type { Location } from './database.js';
import type { RequestReplay, ThroughputReplay } from './floor-replay.js';
import type { ChildMemory, ChildRequest, ExtractionDrain, ObservabilityMode } from './gateway-child.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface GatewayProcess {
  url: string;
  pid: number;
  startMs: number;
  startMemory: ChildMemory;
  captureStart(): Promise<void>;
  /** `keep`: the captured statements join the set the SQL floor replays. */
  captureStop(keep?: boolean): Promise<CaptureSummary>;
  /** The statements of the last capture, with their parameters, in the order issued. */
  capturedStatements(): Promise<{ sql: string; params: unknown[] }[]>;
  /** Empties the floor's set of kept requests. */
  floorClear(): Promise<void>;
  /** Every kept request replayed once, one after another, in the order kept. */
  floorReplayEach(): Promise<RequestReplay[]>;
  /** `concurrency` workers replaying kept requests round robin for `durationMs`. */
  floorThroughput(concurrency: number, durationMs: number): Promise<ThroughputReplay>;
  query<R>(sql: string, params?: unknown[]): Promise<R[]>;
  /** Runs one statement in a transaction that is then rolled back; answers its milliseconds. */
  rolledBack(sql: string, params?: unknown[]): Promise<number>;
  memory(): Promise<ChildMemory>;
  /** Metrics and tracing on or off (a gateway started with MEMGATE_BENCH_OBSERVABILITY=1). */
  observability(mode: ObservabilityMode): Promise<void>;
  /**
   * Serve as the gateway with the model configured (on) or as the plain one (off); started
   * with `processEnv.MEMGATE_BENCH_MODEL_URL`.
   */
  modelExtraction(on: boolean): Promise<void>;
  /** Runs that gateway's model-extraction worker until nothing is ready. */
  drainExtraction(): Promise<ExtractionDrain>;
  /** A CPU profile of the gateway from profileStart to profileStop, written to `file`. */
  profileStart(): Promise<void>;
  profileStop(file: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startGateway(
  location: Location,
  cacheDir: string,
  env: Record<string, string> = {},
  processEnv: Record<string, string> = {},
  /** The Node binary to run the gateway on (default: this process's). */
  execPath: string = process.execPath,
): Promise<GatewayProcess> {
  const started = performance.now();
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  const child: ChildProcess = fork(join(here, 'gateway-child.ts'), [], {
    execPath,
    // e.g. MEMGATE_BENCH_GATEWAY_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the gateway.
    execArgv: [
      '--import',
      tsx,
      ...(process.env.MEMGATE_BENCH_GATEWAY_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ],
    env: {
      // As `npm start` serves (src/main.ts): graphql-js without its development checks.
      NODE_ENV: 'production',
      ...process.env,
      MEMGATE_BENCH_LOCATION: JSON.stringify(location),
      MEMGATE_BENCH_CACHE_DIR: cacheDir,
      MEMGATE_BENCH_GATEWAY_ENV: JSON.stringify(env),
      ...processEnv,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let exited: string | null = null;

  const ready = new Promise<{ port: number; memory: ChildMemory }>((resolve, reject) => {
    child.on(
      'message',
      (
        message: { type?: string; id?: number; result?: unknown; error?: string } & Record<string, unknown>,
      ) => {
        if (message.type === 'ready') {
          resolve(message as unknown as { port: number; memory: ChildMemory });
          return;
        }
        const waiter = message.id === undefined ? undefined : pending.get(message.id);
        if (!waiter) return;
        pending.delete(message.id!);
        if (message.error !== undefined) waiter.reject(new Error(`gateway: ${message.error}`));
        else waiter.resolve(message.result);
      },
    );
    child.on('exit', (code, signal) => {
      exited = `gateway process exited (code ${code}, signal ${signal})`;
      reject(new Error(exited));
      for (const w of pending.values()) w.reject(new Error(exited));
      pending.clear();
    });
  });
  const { port, memory: startMemory } = await ready;

  const ask = <T>(request: ChildRequest): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) return reject(new Error(exited));
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ id, request });
    });

  return {
    url: `http://127.0.0.1:${port}/graphql`,
    pid: child.pid!,
    startMs: performance.now() - started,
    startMemory,
    captureStart: () => ask<void>({ type: 'capture-start' }),
    captureStop: (keep) => ask<CaptureSummary>({ type: 'capture-stop', ...(keep ? { keep } : {}) }),
    capturedStatements: () => ask<{ sql: string; params: unknown[] }[]>({ type: 'captured-statements' }),
    floorClear: () => ask<void>({ type: 'floor-clear' }),
    floorReplayEach: () => ask<RequestReplay[]>({ type: 'floor-replay-each' }),
    floorThroughput: (concurrency, durationMs) =>
      ask<ThroughputReplay>({ type: 'floor-throughput', concurrency, durationMs }),
    query: (sql, params) => ask({ type: 'query', sql, params }),
    rolledBack: (sql, params) => ask<number>({ type: 'rolled-back', sql, params }),
    memory: () => ask<ChildMemory>({ type: 'memory' }),
    observability: (mode) => ask<void>({ type: 'observability', mode }),
    modelExtraction: (on) => ask<void>({ type: 'model-extraction', on }),
    drainExtraction: () => ask<ExtractionDrain>({ type: 'drain-extraction' }),
    profileStart: () => ask<void>({ type: 'profile-start' }),
    profileStop: (file) => ask<void>({ type: 'profile-stop', file }),
    async stop() {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      await ask({ type: 'stop' }).catch(() => undefined);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
