import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import { createProgress, formatSeconds } from './progress.js';
import { UsageError, parseArgs, positiveInt } from './args.js';

const USAGE = 'Usage: memgate reindex [--batch 256]   (stop the gateway first; uses MEMGATE_EMBEDDER)';

registerCommand('reindex', {
  summary: 're-embed every chunk with the configured embedder (after a model or dimension change)',
  async run(args) {
    let batchSize: number;
    try {
      const { positional, options } = parseArgs(args, ['batch']);
      if (options.has('help')) {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      }
      if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
      batchSize = positiveInt(options.get('batch'), 'batch', 256);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    const config = parseConfig(process.env);
    const { createEmbedder } = await import('../providers/create-embedder.js');
    const { openDatabase } = await import('../db/open-database.js');
    const { migrateForReindex, reindex } = await import('../modules/portability/index.js');
    const log = (msg: string) => process.stderr.write(`${msg}\n`);
    // The database first: a data folder held by a running gateway stops the command at once.
    const db = await openDatabase(config);
    try {
      const embedder = await createEmbedder(config.embedder, {
        dataDir: config.dataDir,
        openaiApiKey: config.openaiApiKey,
        openaiBaseUrl: config.openaiBaseUrl,
        log,
      });
      // No embedding check here: a mismatch is exactly what this command repairs.
      const stored = await migrateForReindex(db, embedder);
      log(
        `re-embedding with ${embedder.model} (${embedder.dimensions} dimensions); ` +
          `database built with ${stored ? `${stored.model} (${stored.dimensions})` : 'nothing yet'}`,
      );
      const progress = createProgress('reindex', process.stderr, 'chunks');
      const result = await reindex(db, embedder, {
        batchSize,
        log,
        onProgress: (done, total) => progress.update(done, total),
      });
      progress.done();
      process.stdout.write(
        `reindexed ${result.chunks} chunks with ${result.model} (${result.dimensions} dimensions) in ` +
          `${formatSeconds(result.ms / 1000)}${result.resized ? '; the vector column was resized' : ''}; ` +
          `${result.contextChunks} chunks re-indexed with their neighbouring turns\n`,
      );
      return 0;
    } finally {
      await db.close();
    }
  },
});
