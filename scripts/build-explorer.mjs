// Builds the explorer page (explorer/, served at /explore) into dist/explorer with Vite, after
// generating its typed operations, refuses a bundle over the gzipped budget, and precompresses
// its files (brotli and gzip beside each one, for the server to pick by accept-encoding).
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { PRECOMPRESSED_SUFFIXES, precompressDir } from './precompress.mjs';

export const EXPLORER_BUDGET_BYTES = 500 * 1024;

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

export async function buildExplorer() {
  const codegenPackage = require.resolve('@graphql-codegen/cli/package.json');
  const { bin } = JSON.parse(readFileSync(codegenPackage, 'utf8'));
  const codegen = join(codegenPackage, '..', typeof bin === 'string' ? bin : bin['graphql-codegen']);
  execFileSync(process.execPath, [codegen, '--config', join(root, 'codegen.ts'), '--silent'], {
    cwd: root,
    stdio: 'inherit',
  });
  const { build } = await import('vite');
  await build({ configFile: join(root, 'explorer/vite.config.ts') });
  const gzipped = explorerGzipBytes(join(root, 'dist/explorer'));
  if (gzipped > EXPLORER_BUDGET_BYTES) {
    throw new Error(
      `explorer bundle is ${gzipped} bytes gzipped, over the ${EXPLORER_BUDGET_BYTES}-byte budget`,
    );
  }
  const sent = precompressDir(join(root, 'dist/explorer')).reduce((sum, f) => sum + (f.br ?? f.bytes), 0);
  console.log(
    `explorer: dist/explorer, ${(gzipped / 1024).toFixed(1)} kB gzipped, ${(sent / 1024).toFixed(1)} kB as sent with brotli`,
  );
}

/** Every file of the build, gzipped one by one (as a browser fetches them), summed; not the variants. */
export function explorerGzipBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (PRECOMPRESSED_SUFFIXES.some((suffix) => entry.endsWith(suffix))) continue;
    total += statSync(path).isDirectory()
      ? explorerGzipBytes(path)
      : gzipSync(readFileSync(path), { level: 9 }).length;
  }
  return total;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildExplorer();
