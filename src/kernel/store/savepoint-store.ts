import type { Queryable } from '../../db/database.js';

/**
 * Savepoint statements. Names are chosen by code (`item`, `batch`, …), never by input; they are
 * checked anyway because a name is spliced into the statement, not bound. The statements carry
 * no name comment: statement capture labels them by their verb.
 */
const NAME = /^[a-z_][a-z0-9_]*$/;

function checked(name: string): string {
  if (!NAME.test(name)) throw new Error(`not a savepoint name: ${JSON.stringify(name)}`);
  return name;
}

export async function setSavepoint(tx: Queryable, name: string): Promise<void> {
  await tx.query(`SAVEPOINT ${checked(name)}`);
}

export async function releaseSavepoint(tx: Queryable, name: string): Promise<void> {
  await tx.query(`RELEASE SAVEPOINT ${checked(name)}`);
}

export async function rollbackToSavepoint(tx: Queryable, name: string): Promise<void> {
  await tx.query(`ROLLBACK TO SAVEPOINT ${checked(name)}`);
}
