// `npm run build`: compiles src/ to plain JavaScript in dist/ (types are checked by
// `npm run typecheck`, so emitting skips the check) and copies the SQL migrations beside it.
// dist/assets/ (derived by `npm run prepare`) survives a rebuild.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
for (const entry of safeList(dist)) {
  if (entry !== 'assets') rmSync(join(dist, entry), { recursive: true, force: true });
}
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--noCheck'], {
  stdio: 'inherit',
});
cpSync(join(root, 'src/store/migrations'), join(dist, 'store/migrations'), {
  recursive: true,
  filter: (path) => !path.includes('.') || path.endsWith('.sql'),
});

function safeList(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
