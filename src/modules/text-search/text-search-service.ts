import { assertCanRead, assertCanWrite } from '../../auth/principal.js';
import type { Database, Queryable } from '../../db/database.js';
import { AUTO, detectTextSearchConfig, normaliseTextSearch } from '../../domain/text-search.js';
import { badInput, forbidden, parseInput } from '../../errors.js';
import { loadLatinDetector } from '../../providers/language-detector.js';
import { appendAudit } from '../../kernel/store/audit-store.js';
import {
  type TextSearchReindexRow,
  chunkTextsAfter,
  countChunksByConfig,
  findNamespaceTextSearch,
  findTextSearchReindex,
  runningTextSearchReindexes,
  listTextSearchConfigs,
  recordReindexProgress,
  saveNamespaceTextSearch,
  setChunkConfigs,
  startTextSearchReindex,
} from './store/text-search-store.js';
import type { AppDeps, RequestScope } from '../../kernel/request-scope.js';
import { namespaceSchema } from '../../kernel/validation.js';

/**
 * The configuration each chunk is indexed with, decided once per write batch from the chunk's
 * heading and text (see languageTextOf), the same at write time and when re-indexing.
 */
export type ChunkLanguage = (text: string) => string;

const REINDEX_BATCH = 500;

/** What a chunk's language is detected from: its heading and text, never the title. */
export function languageTextOf(heading: string | null, text: string): string {
  return heading ? `${heading}\n${text}` : text;
}

const configsOf = new WeakMap<Database, Promise<Set<string>>>();

/** pg_ts_config, read once per database (configurations are created by DDL, not at run time). */
function availableConfigs(db: Database): Promise<Set<string>> {
  let configs = configsOf.get(db);
  if (!configs) {
    configs = listTextSearchConfigs(db).then((names) => new Set(names));
    configs.catch(() => configsOf.delete(db));
    configsOf.set(db, configs);
  }
  return configs;
}

/** `auto` falls back to English for text too short or too unsure to tell (or to `simple`). */
function autoFallback(available: ReadonlySet<string>): string {
  return available.has('english') ? 'english' : 'simple';
}

async function languageOf(db: Database, textSearch: string): Promise<ChunkLanguage> {
  if (textSearch !== AUTO) return () => textSearch;
  const [available, detectLatin] = await Promise.all([availableConfigs(db), loadLatinDetector()]);
  const fallback = autoFallback(available);
  return (text) => detectTextSearchConfig(text, { available, fallback, detectLatin });
}

/** The namespace's setting, or the server default when it has none. */
async function effectiveTextSearch(q: Queryable, deps: AppDeps, namespace: string): Promise<string> {
  return (await findNamespaceTextSearch(q, namespace)) ?? deps.config.textSearch;
}

/** What writers call: the configuration for each chunk text of `namespace`. */
export async function chunkLanguageFor(scope: RequestScope, namespace: string): Promise<ChunkLanguage> {
  return chunkLanguageOf(scope.deps, scope.db, namespace);
}

/** The same for a writer outside any request (a background refresher). */
export async function chunkLanguageOf(
  deps: AppDeps,
  q: Queryable,
  namespace: string,
): Promise<ChunkLanguage> {
  return languageOf(deps.db, await effectiveTextSearch(q, deps, namespace));
}

/** Refuses a server default the database cannot use, at start-up rather than at the first write. */
export async function assertTextSearchAvailable(db: Database, textSearch: string): Promise<void> {
  if (textSearch === AUTO) return;
  const available = await availableConfigs(db);
  if (!available.has(textSearch)) {
    throw new Error(
      `MEMGATE_TEXT_SEARCH=${textSearch} is not a text-search configuration of this database; ` +
        `choose auto or one of: ${[...available].join(', ')}.`,
    );
  }
}

export interface TextSearchStatus {
  namespace: string;
  textSearch: string;
  inherited: boolean;
  configurations: { configuration: string; chunks: number | null }[];
  reindex: ReindexView | null;
}

export interface ReindexView {
  textSearch: string;
  state: string;
  progress: number;
  done: number | null;
  total: number | null;
  startedAt: Date;
  finishedAt: Date | null;
}

/**
 * A namespace's text-search language: `auto` or any configuration of pg_ts_config. Changing it
 * re-derives every chunk's tsvector and BM25 postings in batches of a few hundred chunks, each
 * its own short transaction, so reads keep answering in between (and, since statistics are per
 * configuration, answer correctly from a namespace half in each language).
 */
export class TextSearchService {
  constructor(private readonly scope: RequestScope) {}

  /** The setting, the configurations chunks are indexed in, and the last re-derivation. */
  async status(namespace: string): Promise<TextSearchStatus> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    assertCanRead(this.scope.principal, ns);
    const db = this.scope.db;
    const [own, counts, reindex] = await Promise.all([
      findNamespaceTextSearch(db, ns),
      countChunksByConfig(db, ns),
      findTextSearchReindex(db, ns),
    ]);
    // Counts include chunks the caller may not see: only an unrestricted principal gets them.
    const counted = this.scope.principal.scopes === null;
    return {
      namespace: ns,
      textSearch: own ?? this.scope.deps.config.textSearch,
      inherited: own === null,
      configurations: [...counts].map(([configuration, chunks]) => ({
        configuration,
        chunks: counted ? chunks : null,
      })),
      reindex: reindex ? this.view(reindex, counted) : null,
    };
  }

  /**
   * Sets the language and re-derives the namespace's index; answers when every chunk is in its
   * new configuration. An unchanged setting still re-derives (a finished no-op when nothing moved).
   */
  async configure(
    namespace: string,
    value: string,
    onProgress?: (done: number, total: number) => void | Promise<void>,
  ): Promise<TextSearchStatus> {
    const ns = parseInput(namespaceSchema, namespace, 'namespace');
    const principal = this.scope.principal;
    assertCanWrite(principal, ns);
    if (!principal.admin && principal.scopes !== null) {
      throw forbidden(
        'Changing the text search of a namespace re-indexes every chunk; it needs an admin principal.',
      );
    }
    const textSearch = normaliseTextSearch(value);
    const available = await availableConfigs(this.scope.deps.db);
    if (textSearch === null || (textSearch !== AUTO && !available.has(textSearch))) {
      throw badInput(
        `${JSON.stringify(value)} is not a text-search configuration of this database; choose auto or one of: ${[...available].join(', ')}.`,
        { available: [...available] },
      );
    }
    const before = await findNamespaceTextSearch(this.scope.db, ns);
    await this.scope.db.transaction('configureTextSearch', async (tx) => {
      await saveNamespaceTextSearch(tx, ns, textSearch);
      await appendAudit(tx, ns, {
        principalId: principal.id,
        action: 'namespace.textSearch',
        target: ns,
        summary: { textSearch, previous: before },
      });
    });
    await this.reindex(ns, textSearch, onProgress);
    return this.status(ns);
  }

  private reindex(
    ns: string,
    textSearch: string,
    onProgress?: (done: number, total: number) => void | Promise<void>,
  ): Promise<void> {
    return rederive(this.scope.db, this.scope.deps.db, ns, textSearch, { onProgress });
  }

  private view(row: TextSearchReindexRow, counted: boolean): ReindexView {
    return {
      textSearch: row.textSearch,
      state: row.state,
      progress: row.total === 0 ? 1 : Math.min(1, row.done / row.total),
      done: counted ? row.done : null,
      total: counted ? row.total : null,
      startedAt: row.startedAt,
      finishedAt: row.finishedAt,
    };
  }
}

/**
 * Re-derives every chunk of a namespace in `textSearch`, batch by batch, recording progress;
 * `stopped` is asked between batches (a closing gateway leaves the run RUNNING, to resume).
 */
async function rederive(
  db: Queryable & Pick<Database, 'transaction'>,
  configs: Database,
  ns: string,
  textSearch: string,
  options: { onProgress?: (done: number, total: number) => void | Promise<void>; stopped?: () => boolean },
): Promise<void> {
  const { total } = await startTextSearchReindex(db, ns, textSearch);
  const language = await languageOf(configs, textSearch);
  let after = 0;
  let done = 0;
  try {
    for (;;) {
      if (options.stopped?.()) return;
      const batch = await chunkTextsAfter(db, ns, after, REINDEX_BATCH);
      if (batch.length === 0) break;
      await db.transaction('reindexTextSearch', async (tx) => {
        await setChunkConfigs(
          tx,
          ns,
          batch.map((c) => c.chunkId),
          batch.map((c) => language(c.languageText)),
        );
        done += batch.length;
        await recordReindexProgress(tx, ns, done, 'RUNNING');
      });
      await options.onProgress?.(done, Math.max(total, done));
      after = batch[batch.length - 1]!.chunkId;
      // The embedded database runs in this process: give waiting requests their turn.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await recordReindexProgress(db, ns, done, 'DONE');
  } catch (error) {
    await recordReindexProgress(
      db,
      ns,
      done,
      'FAILED',
      'the re-derivation stopped; set the language again to resume',
    );
    throw error;
  }
}

/**
 * At start: re-derivations left RUNNING by a process that died (kill -9, power loss) start
 * over in the background — re-deriving a chunk twice gives the same row, so a run another
 * gateway still drives is only repeated, never corrupted. `stop()` ends it between batches.
 */
export function resumeTextSearchReindexes(
  db: Database,
  logger: { info(msg: string, meta?: object): void; error(msg: string, meta?: object): void },
): { done: Promise<void>; stop(): Promise<void> } {
  let stopped = false;
  const done = (async () => {
    for (const run of await runningTextSearchReindexes(db)) {
      if (stopped) return;
      logger.info('resuming an interrupted text-search re-derivation', { namespace: run.namespace });
      await rederive(db, db, run.namespace, run.textSearch, { stopped: () => stopped });
    }
  })().catch((error) => {
    if (!stopped) logger.error('text-search re-derivation could not resume', { error: String(error) });
  });
  return {
    done,
    async stop() {
      stopped = true;
      await done;
    },
  };
}
