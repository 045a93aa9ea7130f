#!/usr/bin/env node
// Runs the built CLI (dist/, made by `npm install` through `npm run prepare`); in a checkout
// installed with --ignore-scripts it falls back to the TypeScript sources through tsx.
import { existsSync } from 'node:fs';

const built = new URL('../dist/cli.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
