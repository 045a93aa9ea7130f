/**
 * Files derived at install time by `npm run prepare` (src/install/prepare.ts): the offline
 * embedding cache and a migrated PGlite template per embedding. They live in the build output,
 * so a fresh clone never commits them and a first start does no conversion and no initdb.
 * The path is the same from src/ (tsx) and dist/ (the build): both sit one level under the root.
 */
import { fileURLToPath } from 'node:url';
import { wordVectorsCachePath } from './providers/embedding-cache.js';

export const ASSETS_DIR = fileURLToPath(new URL('../dist/assets/', import.meta.url));

export function prebuiltWordVectorsPath(): string {
  return wordVectorsCachePath(ASSETS_DIR);
}
