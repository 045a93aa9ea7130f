/**
 * The one way every read path (search, recall, ask, context and the AUTO handlers) runs a
 * retrieval channel: each channel under its own timeout, concurrently with the others (on
 * PostgreSQL their statements overlap; PGlite queues them), and a channel that fails or times
 * out yields no candidates, a report and a warning — it never fails the read.
 */
import type { Context as OtelContext } from '@opentelemetry/api';
import {
  type ChannelStatus,
  type Pipeline,
  channelSpan,
  recordChannel,
} from '../../../observability/retrieval.js';

export type { ChannelStatus };

export interface ChannelReport {
  candidates: number;
  weight: number;
  ms: number;
  status: ChannelStatus;
  error?: string;
  /** Hits withheld by a hard filter before scoring (e.g. EVIDENCE_LOST facts). */
  blocked?: number;
}

export class ChannelTimeout extends Error {
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

export interface ChannelRunnerOptions {
  timeoutMs: number;
  /** Told about every failure (logging); the runner itself never rethrows. */
  onError?: (channel: string, error: unknown) => void;
  /** Which read path runs the channels (a metrics and span label). */
  pipeline: Pipeline;
  /** The span the channels belong to (the current compiler stage), if any. */
  parentSpan?: () => OtelContext | undefined;
}

export class ChannelRunner {
  private readonly byName = new Map<string, ChannelReport>();

  constructor(private readonly options: ChannelRunnerOptions) {}

  /** Runs one channel; on failure or timeout returns [] and records why. */
  async run<T>(name: string, weight: number, fn: () => Promise<T[]>): Promise<T[]> {
    const started = performance.now();
    try {
      const traced = channelSpan(this.options.pipeline, name, fn, this.options.parentSpan?.());
      const result = await withTimeout(traced, this.options.timeoutMs);
      this.byName.set(name, { candidates: result.length, weight, ms: elapsedMs(started), status: 'ok' });
      recordChannel(this.options.pipeline, name, 'ok', performance.now() - started);
      return result;
    } catch (error) {
      this.recordFailure(name, weight, error, { ms: elapsedMs(started) });
      return [];
    }
  }

  /** Records a failed step that is not a channel run (e.g. the query embedding feeding one). */
  recordFailure(
    name: string,
    weight: number,
    error: unknown,
    options: { ms?: number; message?: string } = {},
  ): void {
    const timeout = error instanceof ChannelTimeout;
    this.options.onError?.(name, error);
    recordChannel(this.options.pipeline, name, timeout ? 'timeout' : 'failed', options.ms ?? 0);
    this.byName.set(name, {
      candidates: 0,
      weight,
      ms: options.ms ?? 0,
      status: timeout ? 'timeout' : 'failed',
      // Never the driver's message: it can carry SQL or data.
      error: timeout ? (error as Error).message : (options.message ?? 'channel failed'),
    });
  }

  report(name: string): ChannelReport | undefined {
    return this.byName.get(name);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Reports by channel name, in the order the channels finished. */
  reports(): ReadonlyMap<string, ChannelReport> {
    return this.byName;
  }

  /** One warning per failed or timed-out channel; `subject` names what is degraded. */
  warnings(subject: string): string[] {
    const out: string[] = [];
    for (const [name, r] of this.byName) {
      if (r.status === 'failed')
        out.push(`channel_failed: ${name} (${r.error ?? 'failed'}); ${subject} is degraded`);
      if (r.status === 'timeout') out.push(`channel_timeout: ${name} (${r.error}); ${subject} is degraded`);
    }
    return out;
  }
}

/** Rejects with ChannelTimeout when `promise` takes longer than `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ChannelTimeout(ms)), ms);
    }),
  ]).finally(() => {
    if (timer) clearTimeout(timer);
  });
}

function elapsedMs(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}
