import { LOCAL_PRINCIPAL } from '../auth/principal.js';
import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import { MemgateError } from '../errors.js';
import { UsageError, parseArgs } from './args.js';
import { createProgress } from './progress.js';

const USAGE =
  'Usage: memgate text-search NAMESPACE auto|CONFIGURATION   (e.g. russian; stop an embedded gateway first)';

registerCommand('text-search', {
  summary: "set a namespace's text-search language and re-index its chunks, with progress",
  async run(args) {
    let namespace: string;
    let textSearch: string;
    try {
      const { positional, options } = parseArgs(args, []);
      if (options.has('help')) {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      }
      if (positional.length !== 2) throw new UsageError('name a namespace and a configuration');
      [namespace, textSearch] = positional as [string, string];
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    const { createApp } = await import('../app.js');
    const { createLoaders } = await import('../kernel/loaders.js');
    const { TextSearchService } = await import('../modules/text-search/index.js');
    const app = await createApp(
      parseConfig({ ...process.env, MEMGATE_LOG_LEVEL: process.env.MEMGATE_LOG_LEVEL ?? 'warn' }),
    );
    const progress = createProgress(`text-search ${namespace}`, process.stderr, 'chunks');
    try {
      const { db } = app.deps;
      const service = new TextSearchService({
        deps: app.deps,
        db,
        principal: LOCAL_PRINCIPAL,
        loaders: createLoaders(db, LOCAL_PRINCIPAL.scopes),
      });
      const status = await service.configure(namespace, textSearch, (done, total) =>
        progress.update(done, total),
      );
      progress.done();
      const counts = status.configurations.map((c) => `${c.configuration} ${c.chunks}`).join(', ');
      process.stdout.write(`${namespace}: ${status.textSearch} (chunks: ${counts || 'none'})\n`);
      return 0;
    } catch (error) {
      if (!(error instanceof MemgateError)) throw error;
      process.stderr.write(`${error.message}\n`);
      return 1;
    } finally {
      await app.close();
    }
  },
});
