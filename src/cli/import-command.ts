import { createReadStream, statSync } from 'node:fs';
import { LOCAL_PRINCIPAL } from '../auth/principal.js';
import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import { namespaceSchema } from '../services/validation.js';
import { createProgress, formatSeconds } from './progress.js';
import { UsageError, parseArgs, positiveInt } from './args.js';

const USAGE = 'Usage: memgate import FILE.jsonl --namespace NS [--batch 500]';

registerCommand('import', {
  summary: 'load a JSON Lines file of ObservationInput / DocumentInput into a namespace',
  async run(args) {
    let file: string;
    let namespace: string;
    let batchSize: number;
    try {
      const { positional, options } = parseArgs(args, ['namespace', 'batch']);
      if (options.has('help')) {
        process.stdout.write(`${USAGE}\n`);
        return 0;
      }
      if (positional.length !== 1) throw new UsageError('expected exactly one FILE');
      file = positional[0]!;
      const ns = options.get('namespace');
      if (typeof ns !== 'string') throw new UsageError('--namespace is required');
      const checked = namespaceSchema.safeParse(ns);
      if (!checked.success) throw new UsageError(`--namespace: ${checked.error.issues[0]?.message}`);
      namespace = checked.data;
      batchSize = positiveInt(options.get('batch'), 'batch', 500);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    const size = statSync(file).size; // fails early, with the path, when the file is missing

    const { createApp } = await import('../app.js');
    const { importJsonl } = await import('../services/import-service.js');
    const app = await createApp(
      parseConfig({ ...process.env, MEMGATE_LOG_LEVEL: process.env.MEMGATE_LOG_LEVEL ?? 'warn' }),
    );
    const progress = createProgress(`import ${namespace}`, process.stderr, 'lines');
    try {
      const summary = await importJsonl(app.deps, LOCAL_PRINCIPAL, createReadStream(file), {
        namespace,
        batchSize,
        onProgress: (s) =>
          progress.update(
            s.lines,
            undefined,
            `${size > 0 ? Math.min(100, (100 * s.bytes) / size).toFixed(0) : 100}% of file  ` +
              `accepted ${s.accepted}  partial ${s.partial}  duplicate ${s.duplicate}  rejected ${s.rejected}`,
          ),
      });
      progress.done();
      const out = [
        `imported ${file} into ${namespace} in ${formatSeconds(summary.ms / 1000)} ` +
          `(${summary.lines} lines: ${summary.observations} observations, ${summary.documents} documents; ` +
          `${(summary.lines / Math.max(summary.ms / 1000, 1e-3)).toFixed(0)} lines/s)`,
        `accepted ${summary.accepted}  partial ${summary.partial}  duplicate ${summary.duplicate}  rejected ${summary.rejected}`,
        `statuses ${JSON.stringify(summary.statuses)}`,
        ...(summary.reasons.length > 0 ? ['first rejections:', ...summary.reasons.map((r) => `  ${r}`)] : []),
      ];
      process.stdout.write(`${out.join('\n')}\n`);
      return summary.rejected > 0 ? 1 : 0;
    } finally {
      await app.close();
    }
  },
});
