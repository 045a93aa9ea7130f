import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import { UsageError, parseArgs } from './args.js';
import { createProgress } from './progress.js';

const USAGE =
  'Usage: memgate extract --namespace NS [--since 2025-01-01T00:00:00Z]   (stop the gateway first)\n' +
  '  Re-runs extraction over stored observations: domain-pack rules at once, and with MEMGATE_LLM\n' +
  '  set, the model through the queue until it is empty (dead letters are reported, not retried).';

registerCommand('extract', {
  summary: 're-run fact extraction (rules, and the model when configured) over stored observations',
  async run(args) {
    let namespace: string;
    let since: Date | null = null;
    try {
      const { positional, options } = parseArgs(args, ['namespace', 'since']);
      if (options.has('help')) {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      }
      if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
      const ns = options.get('namespace');
      if (typeof ns !== 'string' || ns === '') throw new UsageError('--namespace is required');
      namespace = ns;
      const raw = options.get('since');
      if (typeof raw === 'string') {
        since = new Date(raw);
        if (Number.isNaN(since.getTime())) throw new UsageError(`--since ${raw} is not a date (ISO 8601)`);
      }
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    const config = parseConfig(process.env);
    const { createApp } = await import('../app.js');
    const { createContext } = await import('../context.js');
    const { LOCAL_PRINCIPAL } = await import('../auth/principal.js');
    const { ExtractionWorker } = await import('../modules/extraction/index.js');
    const { llmFor } = await import('../providers/llm.js');
    const app = await createApp(config, { extractionWorker: false });
    try {
      const service = createContext(app.deps, LOCAL_PRINCIPAL).services.extraction;
      const llm = llmFor(config);
      const worker = new ExtractionWorker(app.deps.db, llm, app.deps.logger);
      // Before the re-read, which leaves RUNNING jobs alone: on a data folder this process holds,
      // such jobs belong to a process that was killed.
      await worker.adoptOrphans();
      const reading = createProgress('extract (rules)', process.stderr, 'observations');
      const { read, queued } = await service.reread(namespace, since, (done, total) =>
        reading.update(done, total),
      );
      reading.done();
      process.stdout.write(`read ${read} observations with the rules; ${queued} queued for the model\n`);
      if (llm.available && queued > 0) {
        const modelProgress = createProgress('extract (model)', process.stderr, 'jobs');
        let jobs = 0;
        await worker.drain(namespace, (round) => {
          jobs += round.kind === 'idle' ? 0 : round.jobs;
          modelProgress.update(jobs, queued, round.kind === 'done' ? undefined : round.kind);
        });
        modelProgress.done();
      }
      const status = await service.status(namespace);
      process.stdout.write(
        `${status.done} done, ${status.queued} queued (waiting for a retry), ${status.running} running ` +
          `(leased by another process), ${status.dead} failed; ` +
          `${status.factsWritten} facts written by the model; tokens in ${status.tokensIn}, out ${status.tokensOut}\n`,
      );
      for (const f of status.failures) process.stdout.write(`  ${f.count} × ${f.reason}\n`);
      return 0;
    } finally {
      await app.close();
    }
  },
});
