import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { Mutex } from '../../src/db/mutex.js';
import { boundedLabel } from '../../src/observability/metrics.js';
import { OperationLabeler } from '../../src/observability/operation-labels.js';
import { statementName } from '../../src/db/statement-capture.js';
import { schema } from '../../src/schema/index.js';

describe('statementName', () => {
  it('is the /* queryName */ comment, never the SQL text', () => {
    expect(statementName('/* lexicalChannel */ SELECT 1')).toBe('lexicalChannel');
    expect(statementName('\n    /* insertContextTraces */\n INSERT INTO t VALUES ($1)')).toBe(
      'insertContextTraces',
    );
    expect(statementName("SELECT * FROM chunks WHERE text = 'secret'")).toBe('unnamed');
    expect(statementName("/* it's user text */ SELECT 1")).toBe('unnamed');
  });

  it('names transaction control by its verb', () => {
    expect(statementName('SAVEPOINT item')).toBe('savepoint');
    expect(statementName('ROLLBACK TO SAVEPOINT item')).toBe('rollback');
    expect(statementName('RELEASE SAVEPOINT item')).toBe('release');
  });
});

describe('boundedLabel', () => {
  it('keeps short names and folds anything else into other', () => {
    expect(boundedLabel('OVER_BUDGET')).toBe('OVER_BUDGET');
    expect(boundedLabel('two words')).toBe('other');
    expect(boundedLabel('x'.repeat(65))).toBe('other');
    expect(boundedLabel(undefined)).toBe('none');
  });
});

describe('OperationLabeler', () => {
  const labeler = new OperationLabeler(schema);

  it('labels type, name and first root field, the field only when the schema has it', () => {
    expect(
      labeler.labels(parse('query Pack { context(input: {namespaces: []}) { text } }'), undefined),
    ).toEqual({
      operationType: 'query',
      operationName: 'Pack',
      rootField: 'context',
    });
    expect(labeler.labels(parse('{ alias: noSuchField }'), undefined)).toEqual({
      operationType: 'query',
      operationName: 'anonymous',
      rootField: 'other',
    });
  });

  it('bounds operation names: at most 200 distinct, the rest other', () => {
    const fresh = new OperationLabeler(schema);
    const names = Array.from({ length: 205 }, (_, i) =>
      fresh.labels(parse(`query Op${i} { __typename }`), undefined),
    );
    expect(new Set(names.map((n) => n.operationName)).size).toBe(201);
    expect(names.at(-1)?.operationName).toBe('other');
    // A name seen before keeps its label.
    expect(fresh.labels(parse('query Op0 { __typename }'), undefined).operationName).toBe('Op0');
  });
});

describe('Mutex', () => {
  it('reports its queue depth and each wait', async () => {
    const lock = new Mutex();
    const waits: number[] = [];
    lock.onWait = (ms) => waits.push(ms);
    let release!: () => void;
    const first = lock.run(() => new Promise<void>((r) => (release = r)));
    const second = lock.run(async () => undefined);
    const third = lock.run(async () => undefined);
    await Promise.resolve();
    expect(lock.depth).toBe(2);
    release();
    await Promise.all([first, second, third]);
    expect(lock.depth).toBe(0);
    expect(waits).toHaveLength(3);
  });
});
