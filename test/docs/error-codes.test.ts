/** The README's list of error codes names every code the gateway answers with. */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';
import { type TestGateway, startTestGateway } from '../helpers/gateway.js';

const readme = readFileSync('README.md', 'utf8');
// The paragraph that starts "Every error carries a stable `extensions.code`".
const codeList = readme.slice(
  readme.indexOf('Every error carries a stable'),
  readme.indexOf('Batch writes answer'),
);

describe("README's error codes", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => gw?.close());

  it('lists every code of src/errors.ts and INTERNAL_SERVER_ERROR', () => {
    expect(codeList.length).toBeGreaterThan(100);
    for (const code of [...ERROR_CODES, 'INTERNAL_SERVER_ERROR']) expect(codeList).toContain(`\`${code}\``);
  });

  it('lists the code of a malformed HTTP request, as the server answers it', async () => {
    const response = await fetch(gw.url, { method: 'PUT', body: '{}' });
    const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
    const code = body.errors[0]!.extensions.code;
    expect(code).toBe('BAD_REQUEST');
    expect(codeList).toContain(`\`${code}\``);
  });
});
