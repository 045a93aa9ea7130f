/**
 * The bench's hand-written chunk inserts (the bulk load, the write floor) with the postings
 * CTEs the gateway's own chunk statements carry (src/kernel/store/postings.ts): since the
 * postings triggers are gone, an INSERT INTO chunks without them would leave the lexical index
 * empty and the floor cheaper than any real write. The fragments bind no parameter, so they
 * splice into statement text numbered `$1…$n` by hand.
 */
import { postedColumns, postingsOfInserted } from '../src/kernel/store/postings.js';
import { type SqlFragment, compileSql } from '../src/kernel/store/sql.js';

function text(fragment: SqlFragment): string {
  const compiled = compileSql(fragment);
  if (compiled.values.length > 0) throw new Error('a postings fragment bound a parameter');
  return compiled.text;
}

/**
 * `insert` (an `INSERT INTO chunks … ` without RETURNING) as CTE `name` of a WITH, followed by
 * the CTEs that post what it inserted: splice after `WITH` (and other CTEs, comma-separated).
 */
export function postedChunkInsert(name: string, insert: string): string {
  return `${name} AS (${insert} RETURNING ${text(postedColumns('chunks'))}), ${text(postingsOfInserted(name))}`;
}
