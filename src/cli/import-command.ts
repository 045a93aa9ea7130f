import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { LOCAL_PRINCIPAL } from '../auth/principal.js';
import { registerCommand } from '../cli-registry.js';
import { parseConfig } from '../config.js';
import { namespaceSchema } from '../kernel/validation.js';
import type { ImportSummary, ImportWriter } from '../modules/portability/index.js';
import { createProgress, formatAmount, formatRate, formatSeconds } from './progress.js';
import { UsageError, parseArgs, positiveInt } from './args.js';
import { configuredLocation, describeLocation, openLocation } from './database-location.js';

const USAGE = `Usage: memgate import FILE.jsonl --namespace NS [--bulk] [--batch N] [--url URL [--token TOKEN]]
       memgate import EXPORT.jsonl        (a file written by \`memgate export\`)
  --bulk         the bulk path for large files: COPY, set-based writes, the vector index built
                 once at the end when the load is large (default batch 1000, else 500)
  --vector-index keep|rebuild   with --bulk: override that choice
  --url URL      import through a running gateway's GraphQL API (e.g. http://127.0.0.1:4000/graphql)
                 instead of opening the data folder, which a running gateway holds
  --token TOKEN  bearer token for --url (default: MEMGATE_TOKEN)`;

registerCommand('import', {
  summary: 'load a JSON Lines file of ObservationInput / DocumentInput, or a `memgate export` file',
  async run(args) {
    const exported = args.find((a) => !a.startsWith('--'));
    if (exported && (await startsWithExportHeader(exported))) {
      if (args.length > 1) {
        process.stderr.write(
          `${exported} is a memgate export: it is imported whole, without options.\n${USAGE}\n`,
        );
        return 2;
      }
      return importExportFile(exported);
    }
    let file: string;
    let namespace: string;
    let batchSize: number;
    let url: string | undefined;
    let token: string | undefined;
    let bulk: boolean;
    let vectorIndex: 'KEEP' | 'REBUILD' | undefined;
    try {
      const { positional, options } = parseArgs(args, ['namespace', 'batch', 'url', 'token', 'vector-index']);
      bulk = options.get('bulk') === true;
      const plan = stringOption(options.get('vector-index'), 'vector-index');
      if (plan !== undefined && plan !== 'keep' && plan !== 'rebuild')
        throw new UsageError('--vector-index must be keep or rebuild');
      if (plan !== undefined && !bulk) throw new UsageError('--vector-index needs --bulk');
      vectorIndex = plan === undefined ? undefined : plan === 'keep' ? 'KEEP' : 'REBUILD';
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
      batchSize = positiveInt(options.get('batch'), 'batch', bulk ? 1000 : 500);
      url = stringOption(options.get('url'), 'url');
      if (url !== undefined && !/^https?:\/\/./.test(url))
        throw new UsageError('--url must be an http(s) URL');
      token = stringOption(options.get('token'), 'token') ?? process.env.MEMGATE_TOKEN;
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(`${error.message}\n${USAGE}\n`);
      return 2;
    }
    const size = statSync(file).size; // fails early, with the path, when the file is missing

    const { importJsonlWith } = await import('../modules/portability/index.js');
    const { localImportWriter } = await import('./local-import.js');
    let writer: ImportWriter;
    let close = async () => {};
    if (url) {
      const { remoteImportWriter } = await import('./remote-writer.js');
      writer = remoteImportWriter(url, token);
    } else {
      const { createApp } = await import('../app.js');
      const app = await createApp(
        parseConfig({ ...process.env, MEMGATE_LOG_LEVEL: process.env.MEMGATE_LOG_LEVEL ?? 'warn' }),
      );
      writer = localImportWriter(app.deps, LOCAL_PRINCIPAL);
      close = () => app.close();
    }
    const progress = createProgress(`import ${namespace}`, process.stderr, 'lines');
    // The bulk path counts the lines first: the vector-index decision and the ETA need them.
    const expectedLines = bulk ? await countLines(file) : undefined;
    try {
      const summary = await importJsonlWith(writer, createReadStream(file), {
        namespace,
        batchSize,
        ...(expectedLines !== undefined
          ? {
              bulk: {
                expectedLines,
                ...(vectorIndex ? { vectorIndex } : {}),
                onIndexBuild: () => progress.done('building the vector index…'),
              },
            }
          : {}),
        onProgress: (s) =>
          progress.update(
            s.lines,
            expectedLines,
            `${size > 0 ? Math.min(100, (100 * s.bytes) / size).toFixed(0) : 100}% of file  ` +
              `accepted ${s.accepted}  partial ${s.partial}  duplicate ${s.duplicate}  rejected ${s.rejected}`,
          ),
      });
      progress.done();
      process.stdout.write(`${formatSummary(file, namespace, summary).join('\n')}\n`);
      return summary.rejected > 0 ? 1 : 0;
    } finally {
      await close();
    }
  },
});

/** Reads just the first line: an export starts with its header, an observations file does not. */
async function startsWithExportHeader(file: string): Promise<boolean> {
  // The portability module is most of the gateway: loaded when a command needs it, not by
  // every command of the CLI (all of them register at start, this one included).
  const { isExportHeader } = await import('../modules/portability/index.js');
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false; // the observations path reports the missing file
  }
  try {
    const buffer = Buffer.alloc(1024 * 1024); // a header lists every namespace
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, n).toString('utf8');
    return isExportHeader(text.split('\n', 1)[0] ?? '');
  } finally {
    closeSync(fd);
  }
}

async function importExportFile(file: string): Promise<number> {
  const { importExport } = await import('../modules/portability/index.js');
  const size = statSync(file).size;
  const location = configuredLocation(parseConfig({ ...process.env, MEMGATE_LOG_LEVEL: 'warn' }));
  const db = await openLocation(location, false);
  const progress = createProgress('import', process.stderr, 'bytes');
  const started = performance.now();
  try {
    const summary = await importExport(db, createReadStream(file), (bytes, s) =>
      progress.update(bytes, size, `${s.records} records  new ${s.inserted}  already there ${s.existing}`),
    );
    progress.done();
    process.stdout.write(
      `imported ${file} into ${describeLocation(location)} in ${formatSeconds((performance.now() - started) / 1000)}: ` +
        `${summary.namespaces.length} namespaces, ${summary.records} records (new ${summary.inserted}, already there ${summary.existing})\n`,
    );
    return 0;
  } finally {
    await db.close();
  }
}

function formatSummary(file: string, namespace: string, summary: ImportSummary): string[] {
  return [
    `imported ${file} into ${namespace} in ${formatSeconds(summary.ms / 1000)} ` +
      `(${formatAmount(summary.lines, 'lines')}: ${formatAmount(summary.observations, 'observations')}, ${formatAmount(summary.documents, 'documents')}; ` +
      `${formatRate(summary.lines / Math.max(summary.ms / 1000, 1e-3), 'lines')})`,
    `accepted ${summary.accepted}  partial ${summary.partial}  duplicate ${summary.duplicate}  rejected ${summary.rejected}`,
    `statuses ${JSON.stringify(summary.statuses)}`,
    ...(summary.vectorIndex
      ? [
          `vector index ${summary.vectorIndex.plan === 'REBUILD' ? 'rebuilt once after the load' : 'kept live'}` +
            ` (${summary.vectorIndex.finish === 'BUILT' ? `built in ${formatSeconds(summary.vectorIndex.ms / 1000)}` : 'ready'})`,
        ]
      : []),
    ...listed('rejected', summary.rejected, summary.reasons, 'not written'),
    ...listed('partial', summary.partial, summary.partials, 'stored, with part of each rejected'),
  ];
}

/** `rejected lines (2 of 14 shown): not written` and the lines, or nothing when there are none. */
function listed(what: string, count: number, lines: readonly string[], meaning: string): string[] {
  if (count === 0) return [];
  const shown = new Set(lines.map((l) => /^line \d+/.exec(l)?.[0])).size;
  const head = shown < count ? `${what} lines (first ${shown} of ${count})` : `${what} lines (${count})`;
  return [`${head}, ${meaning}:`, ...lines.map((l) => `  ${l}`)];
}

/** Non-empty lines of a file, read in large blocks. */
async function countLines(file: string): Promise<number> {
  let lines = 0;
  let last = 10;
  for await (const block of createReadStream(file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    for (let i = 0; i < block.length; i++) {
      const byte = block[i]!;
      if (byte === 10 && last !== 10) lines++;
      last = byte;
    }
  }
  return last === 10 ? lines : lines + 1;
}

function stringOption(value: string | true | undefined, name: string): string | undefined {
  if (value === true) throw new UsageError(`--${name} needs a value`);
  return value;
}
