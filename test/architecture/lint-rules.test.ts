import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

// The architecture rules of `npm run lint` (docs/architecture.md), run on a small tree that
// breaks each of them once beside imports that are allowed: every rule must fire, and only there.
const repo = resolve(import.meta.dirname, '../..');
const tree = mkdtempSync(join(tmpdir(), 'memgate-architecture-'));
afterAll(() => rmSync(tree, { recursive: true, force: true }));

function write(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true });
    writeFileSync(join(tree, path), text);
  }
}

write({
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' } }),
  'src/errors.ts': 'export const failure = 1;\n',
  'src/context.ts':
    'export interface Context {\n  n: number;\n}\nexport const createContext = (): Context => ({ n: 1 });\n',
  'src/server.ts': "import { createContext } from './context.js';\nexport const server = createContext;\n",
  'src/cli/run.ts':
    "import { alpha } from '../modules/alpha/index.js';\nimport { beta } from '../modules/beta/beta-service.js';\nexport const run = [alpha, beta];\n",
  'src/domain/cycle-a.ts': "import { b } from './cycle-b.js';\nexport const a = () => b;\n",
  'src/domain/cycle-b.ts': "import { a } from './cycle-a.js';\nexport const b = () => a;\n",
  'src/domain/impure.ts': "import { database } from '../db/database.js';\nexport const impure = database;\n",
  'src/db/database.ts':
    "import { kernelThing } from '../kernel/thing.js';\nexport const database = kernelThing;\n",
  'src/kernel/thing.ts':
    "import type { Context } from '../context.js';\nimport { failure } from '../errors.js';\nexport const kernelThing = failure;\nexport type Ctx = Context;\n",
  'src/kernel/reaches-up.ts':
    "import { createContext } from '../context.js';\nimport { beta } from '../modules/beta/index.js';\nexport const up = [createContext, beta];\n",
  'src/kernel/store/sql.ts': 'export const sql = (s: TemplateStringsArray) => s.join("");\n',
  'src/kernel/store/core-store.ts': "import { sql } from './sql.js';\nexport const read = sql`SELECT 1`;\n",
  'src/security/plugin.ts': "import { beta } from '../modules/beta/index.js';\nexport const plugin = beta;\n",
  'src/modules/alpha/index.ts': "export { alpha } from './alpha-service.js';\n",
  'src/modules/alpha/alpha-service.ts':
    "import { sql } from '../../kernel/store/sql.js';\nimport { beta } from '../beta/index.js';\nimport { betaStore } from '../beta/store/beta-store.js';\nimport { server } from '../../server.js';\nexport const alpha = [sql, beta, betaStore, server];\n",
  'src/modules/beta/index.ts': "export { beta } from './beta-service.js';\n",
  'src/modules/beta/beta-service.ts':
    "import { betaStore } from './store/beta-store.js';\nexport const beta = betaStore;\n",
  'src/modules/beta/store/beta-store.ts':
    "import { sql } from '../../../kernel/store/sql.js';\nexport const betaStore = sql`SELECT 2`;\n",
});

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

describe('npm run lint: the architecture rules', () => {
  it('fire on each broken rule, and only there', () => {
    const run = spawnSync(
      join(repo, 'node_modules/.bin/depcruise'),
      ['src', '--config', join(repo, '.dependency-cruiser.cjs'), '--output-type', 'json'],
      { cwd: tree, encoding: 'utf8' },
    );
    const found = (JSON.parse(run.stdout).summary.violations as Violation[])
      .map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)
      .sort();
    expect(found).toEqual(
      [
        'app-through-module-index: src/cli/run.ts -> src/modules/beta/beta-service.ts',
        'base-below-the-kernel: src/db/database.ts -> src/kernel/thing.ts',
        'context-as-a-type-only: src/kernel/reaches-up.ts -> src/context.ts',
        'domain-is-pure: src/domain/impure.ts -> src/db/database.ts',
        'edge-below-modules: src/security/plugin.ts -> src/modules/beta/index.ts',
        'kernel-imports-no-module: src/kernel/reaches-up.ts -> src/modules/beta/index.ts',
        'module-through-its-index: src/modules/alpha/alpha-service.ts -> src/modules/beta/store/beta-store.ts',
        'modules-below-the-app: src/modules/alpha/alpha-service.ts -> src/server.ts',
        'no-cycles: src/domain/cycle-a.ts -> src/domain/cycle-b.ts',
        'only-stores-build-sql: src/modules/alpha/alpha-service.ts -> src/kernel/store/sql.ts',
      ].sort(),
    );
  });

  it('finds SQL run outside the stores', () => {
    write({
      'src/modules/alpha/raw.ts':
        "export const raw = (db: { query(s: string): void }) => db.query('SELECT 1');\n",
      'src/modules/beta/store/fine-store.ts':
        "export const fine = (db: { query(s: string): void }) => db.query('SELECT 1');\n",
    });
    const run = spawnSync(process.execPath, [join(repo, 'scripts/check-sql-in-stores.mjs'), tree], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("src/modules/alpha/raw.ts:1: db.query('SELECT 1')");
    expect(run.stderr).not.toContain('fine-store');
  });
});
