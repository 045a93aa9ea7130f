// Builds GraphiQL's assets into dist/graphiql: @graphql-yoga/render-graphiql ships GraphiQL as
// one page with every script, style and worker inline (about 9 MB, sent again on every visit).
// Here the same code becomes files named by content hash — the script (with its workers and the
// start-up that reads the page's options), the stylesheet and the icon — which the server sends
// precompressed and lets browsers cache for good; the page that names them
// (src/graphiql.ts) is a few hundred bytes, rendered per request. manifest.json lists the names.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { precompressDir } from './precompress.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The id of the script element holding the page's options, read by the script's start-up. */
export const OPTIONS_ELEMENT_ID = 'graphiql-options';

export async function buildGraphiQL() {
  // The package exports only its index; its bundle sits beside it.
  const index = createRequire(import.meta.url).resolve('@graphql-yoga/render-graphiql');
  const bundle = join(dirname(index), '..', 'esm', 'graphiql.js');
  const { css, editorWorkerService, favicon, graphqlWorker, js, jsonWorker } = await import(
    pathToFileURL(bundle).href
  );
  const out = join(root, 'dist/graphiql');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(join(out, 'assets'), { recursive: true });
  const write = (name, ext, body) => {
    const file = `${name}-${createHash('sha256').update(body).digest('hex').slice(0, 12)}${ext}`;
    writeFileSync(join(out, 'assets', file), body);
    return file;
  };
  const manifest = {
    optionsElementId: OPTIONS_ELEMENT_ID,
    script: write('graphiql', '.js', script({ editorWorkerService, graphqlWorker, js, jsonWorker })),
    style: write('graphiql', '.css', css),
    icon: write('favicon', '.ico', iconBytes(favicon)),
  };
  writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const files = precompressDir(out);
  const bytes = (key) => files.reduce((sum, f) => sum + (f[key] ?? f.bytes), 0);
  console.log(
    `graphiql: dist/graphiql, ${(bytes('bytes') / 1024).toFixed(0)} kB, ` +
      `${(bytes('br') / 1024).toFixed(0)} kB as sent with brotli`,
  );
}

/** What render-graphiql's page runs, word for word, but for its options: read from the page. */
function script({ editorWorkerService, graphqlWorker, js, jsonWorker }) {
  return `function prepareBlob(workerContent) {
  const blob = new Blob([workerContent], { type: 'application/javascript' });
  return URL.createObjectURL(blob);
}
const workers = {
  editorWorkerService: prepareBlob(${JSON.stringify(editorWorkerService)}),
  json: prepareBlob(${JSON.stringify(jsonWorker)}),
  graphql: prepareBlob(${JSON.stringify(graphqlWorker)}),
};
self['MonacoEnvironment'] = {
  globalAPI: false,
  getWorkerUrl: function (moduleId, label) {
    return workers[label];
  },
};
${js};
YogaGraphiQL.renderYogaGraphiQL(
  window.document.querySelector('#root'),
  JSON.parse(window.document.getElementById(${JSON.stringify(OPTIONS_ELEMENT_ID)}).textContent),
);
`;
}

function iconBytes(dataUrl) {
  const match = /^data:[^;,]+;base64,(.*)$/s.exec(dataUrl);
  if (!match) throw new Error('render-graphiql: its favicon is no longer a base64 data URL');
  return Buffer.from(match[1], 'base64');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildGraphiQL();
