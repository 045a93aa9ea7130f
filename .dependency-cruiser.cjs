/**
 * The architecture rules `npm run lint` enforces (dependency-cruiser); docs/architecture.md
 * explains them. Layers, bottom to top:
 *   foundation  src/errors.ts, config.ts, logger.ts, global-id.ts, assets.ts — open to all
 *   base        src/domain (pure rules), src/db, src/providers, src/auth, src/observability
 *   kernel      src/kernel: the sql tag, core stores, batch writer, loaders, the schema builder
 *   edge        src/security: request plugins over the kernel
 *   modules     src/modules/<feature>: one folder per feature
 *   app         the server and its wiring (src/*.ts, src/schema), the CLI, MCP, eval
 * The request context type (src/context.ts) is known to every layer as a type only.
 */
const FOUNDATION = '(errors|config|logger|global-id|assets)';
const APP = `^src/(?:(?!${FOUNDATION}\\.ts$)[^/]+\\.ts$|schema/|cli/|mcp/|eval/|install/)`;
const CONTEXT = '^src/context\\.ts$';
const BASE = '^src/(domain|db|providers|auth|observability)/';
const EDGE = '^src/security/';

/** A rule forbidding `from` to import `to`, where a type-only import of the context is fine. */
const layer = (name, comment, from, to) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: to, pathNot: CONTEXT },
});

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
      from: { path: '^src/modules/([^/]+)/' },
      to: {
        path: '^src/modules/',
        pathNot: ['^src/modules/$1/', '^src/modules/[^/]+/index\\.ts$', '^src/modules/[^/]+/schema/index\\.ts$'],
      },
    },
    {
      name: 'app-through-module-index',
      comment: 'The app reaches a module through its index.ts, or registers its types through schema/index.ts.',
      severity: 'error',
      from: { path: APP },
      to: {
        path: '^src/modules/',
        pathNot: ['^src/modules/[^/]+/index\\.ts$', '^src/modules/[^/]+/schema/index\\.ts$'],
      },
    },
    layer('kernel-imports-no-module', 'The kernel is what every module shares; it knows none of them.', '^src/kernel/', [
      '^src/modules/',
      EDGE,
      APP,
    ]),
    layer('edge-below-modules', 'Security plugins sit below the modules and the app.', EDGE, [
      '^src/modules/',
      APP,
    ]),
    layer('modules-below-the-app', 'Modules sit below the server, the CLI and MCP.', '^src/modules/', APP),
    layer('base-below-the-kernel', 'domain, db, providers, auth and observability sit below the kernel.', BASE, [
      '^src/kernel/',
      '^src/modules/',
      EDGE,
      APP,
    ]),
    {
      name: 'domain-is-pure',
      comment: 'domain/ holds pure rules: no database, providers, auth or plugins.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/(db|providers|auth|security|observability)/' },
    },
    {
      name: 'context-as-a-type-only',
      comment: 'Below the app the request context is a type: only the app builds one.',
      severity: 'error',
      from: { pathNot: APP },
      to: { path: CONTEXT, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'only-stores-build-sql',
      comment: 'The sql tag is for stores (files in a store/ folder) and db/.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['/store/', '^src/db/'] },
      to: { path: '^src/kernel/store/sql\\.ts$', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
