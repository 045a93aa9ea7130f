import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

/** The README's live-updates example, run as written against a real gateway (local mode). */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw?.close();
});

function readmeExample(): string {
  const readme = readFileSync('README.md', 'utf8');
  const m = /<!-- example: live-subscribe -->\n```js\n([\s\S]*?)```/.exec(readme);
  if (!m) throw new Error('README example live-subscribe not found');
  return m[1]!;
}

it('README: the live-updates example prints the changes it is sent', async () => {
  const source = readmeExample().replace('ws://127.0.0.1:4000/graphql', gw.url.replace(/^http/, 'ws'));
  expect(source).toContain(gw.url.replace(/^http/, 'ws'));
  // Inside the repository, so the example's imports resolve against its node_modules.
  mkdirSync('.test-cache', { recursive: true });
  const file = join('.test-cache', `readme-live-${process.pid}.mjs`);
  writeFileSync(file, source);
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  try {
    // The example has connected once a write made after its start shows in its output.
    for (let tick = 0; !out.includes('ENTITY alice'); tick++) {
      if (tick > 100 || child.exitCode !== null) throw new Error(`example produced ${out} ${err}`);
      await gw.gql(
        `mutation { upsertEntities(namespace: "demo", entities: [{ key: "alice", kind: "person", title: "Alice ${tick}" }]) { accepted } }`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await gw.gql(
      'mutation { assertFacts(namespace: "demo", facts: [{ subject: "alice", predicate: "works_at", object: "acme" }]) { accepted } }',
    );
    for (let tick = 0; !out.includes('FACT '); tick++) {
      if (tick > 100) throw new Error(`example produced ${out} ${err}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(err).toBe('');
  } finally {
    child.kill('SIGTERM');
    rmSync(file, { force: true });
  }
});
