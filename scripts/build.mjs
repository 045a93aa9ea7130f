// `npm run build`: compiles src/ to plain JavaScript in dist/ (types are checked by
// `npm run typecheck`, so emitting skips the check) and copies the SQL migrations beside it.
// dist/assets/ (derived by `npm run prepare`) survives a rebuild. Then GraphiQL's assets are
// written into dist/graphiql and the explorer page (explorer/, served at /explore) is built into
// dist/explorer by Vite, both precompressed (brotli and gzip) for the server to send.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildExplorer } from './build-explorer.mjs';
import { buildGraphiQL } from './build-graphiql.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
for (const entry of safeList(dist)) {
  if (entry !== 'assets') rmSync(join(dist, entry), { recursive: true, force: true });
}
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--noCheck'], {
  stdio: 'inherit',
});
cpSync(join(root, 'src/kernel/store/migrations'), join(dist, 'kernel/store/migrations'), {
  recursive: true,
  filter: (path) => !path.includes('.') || path.endsWith('.sql'),
});

await buildGraphiQL();
await buildExplorer();

function safeList(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
