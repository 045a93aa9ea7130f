/**
 * The architecture rules `npm run lint` enforces (dependency-cruiser). docs/architecture.md
 * explains the layers: domain → db/providers → kernel → modules → the app (server, CLI, MCP).
 */
const MODULE = '^src/modules/([^/]+)/';
const APP = '^src/(?:[^/]+\\.ts$|schema/|cli/|mcp/|eval/|install/)';
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Import cycles make load order matter and hide which file owns a concept.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'module-through-its-index',
      comment: "A module uses another module only through what that module's index.ts exports.",
      severity: 'error',
      from: { path: MODULE },
      to: { path: '^src/modules/', pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$'] },
    },
    {
      name: 'app-uses-modules-through-their-index',
      comment: 'The server, CLI and MCP reach a module through its index.ts (or its schema/index.ts).',
      severity: 'error',
      from: { path: APP },
      to: { path: '^src/modules/', pathNot: ['^src/modules/[^/]+/index\\.ts$', '^src/modules/[^/]+/schema/index\\.ts$'] },
    },
    {
      name: 'kernel-imports-no-module',
      comment: 'The kernel is what every module shares; it knows none of them.',
      severity: 'error',
      from: { path: '^src/kernel/' },
      to: { path: ['^src/modules/', APP] },
    },
    {
      name: 'modules-do-not-import-the-app',
      comment: 'Modules sit below the server, the CLI and MCP.',
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { path: APP },
    },
    {
      name: 'lower-layers-do-not-import-up',
      comment: 'domain, db, providers, auth, security and observability sit below the kernel.',
      severity: 'error',
      from: { path: '^src/(domain|db|providers|auth|security|observability)/' },
      to: { path: ['^src/kernel/', '^src/modules/', APP] },
    },
    {
      name: 'domain-is-pure',
      comment: 'domain/ holds pure rules: no database, no providers.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(db|providers|auth|security|observability)/' },
    },
    {
      name: 'only-stores-run-sql',
      comment: 'The sql tag and the database handle are for stores (files in a store/ folder) and db/.',
      severity: 'error',
      from: { pathNot: ['/store/', '^src/db/', '^src/install/'] },
      to: { path: '^src/kernel/store/sql\\.ts$', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
