// `npm run lint`: only stores run SQL. Lists every `.query(...)` call in src/ outside a store/
// folder and src/db/ (the adapters), and exits 1 if there is one. The import rules of
// .dependency-cruiser.cjs keep the sql tag in stores; this catches SQL written as a plain string.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

// The tree to check: the repository, or the folder given as the first argument (tests).
const root = process.argv[2] ?? new URL('..', import.meta.url).pathname;
const allowed = (file) => /(^|\/)store\//.test(file) || file.startsWith('src/db/');

function* sourceFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

function queryCalls(file) {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'query'
    ) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${line + 1}: ${node.getText().split('\n')[0].slice(0, 100)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const offences = [];
for (const path of sourceFiles(join(root, 'src'))) {
  const file = relative(root, path);
  if (allowed(file)) continue;
  for (const call of queryCalls(path)) offences.push(`${file}:${call}`);
}
if (offences.length > 0) {
  console.error(`SQL outside the stores (move it into a store/ file):\n${offences.join('\n')}`);
  process.exit(1);
}
