import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateToken, hashToken } from '../../src/auth/tokens-file.js';

export interface PrincipalSpec {
  id: string;
  read?: string[];
  write?: string[];
  scopes?: string[];
  pii?: boolean;
  admin?: boolean;
}

/** A tokens file in a fresh temporary directory, and the bearer token of each principal. */
export function writeTokensFile(specs: PrincipalSpec[]): {
  path: string;
  dir: string;
  tokens: Record<string, string>;
} {
  const dir = mkdtempSync(join(tmpdir(), 'memgate-tokens-'));
  const path = join(dir, 'tokens.json');
  const tokens: Record<string, string> = {};
  const principals = specs.map((s) => {
    const token = generateToken();
    tokens[s.id] = token;
    return {
      id: s.id,
      tokenSha256: hashToken(token),
      read: s.read ?? [],
      write: s.write ?? [],
      scopes: s.scopes ?? [],
      pii: s.pii ?? false,
      admin: s.admin ?? false,
    };
  });
  writeFileSync(path, JSON.stringify({ principals }, null, 2));
  return { path, dir, tokens };
}
