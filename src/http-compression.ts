/**
 * Compression of what yoga answers over HTTP (/graphql results, the GraphiQL page, /metrics):
 * a body of known length from `thresholdBytes` up, of a textual type, is sent in brotli or gzip
 * as the request's accept-encoding allows. Everything compressible carries
 * `Vary: Accept-Encoding`. A body of unknown length is a stream (SSE subscriptions, incremental
 * delivery) and is never buffered here; a response that already names its coding (yoga's SSE
 * says `none`) is left alone.
 *
 * Not @whatwg-node/server's useContentEncoding: it compresses every body whatever its size,
 * streams included, reads accept-encoding without q-values, sets no Vary, and decompresses
 * request bodies past the body limit that src/http.ts enforces.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin } from 'graphql-yoga';
import { type ContentEncoding, negotiateEncoding, varyOnAcceptEncoding } from './http-encoding.js';

export const COMPRESSION_THRESHOLD_BYTES = 1024;

const COMPRESSIBLE = /^(?:application\/(?:json|graphql-response\+json)|text\/(?:html|plain))\s*(?:;|$)/i;

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * Per response, so a middle quality: brotli 4 and gzip 6 (nginx's and most CDNs' dynamic
 * defaults), in the thread pool rather than on the event loop.
 */
export function compress(encoding: ContentEncoding, body: Uint8Array): Promise<Buffer> {
  if (encoding === 'gzip') return gzipAsync(body, { level: 6 });
  return brotliAsync(body, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: 4,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
    },
  });
}

export function useResponseCompression(thresholdBytes = COMPRESSION_THRESHOLD_BYTES): Plugin {
  return {
    onResponse({ request, response, setResponse, fetchAPI }) {
      const { headers } = response;
      if (!COMPRESSIBLE.test(headers.get('content-type') ?? '') || headers.has('content-encoding')) return;
      headers.set('vary', varyOnAcceptEncoding(headers.get('vary')));
      const length = Number(headers.get('content-length'));
      if (!headers.has('content-length') || !(length >= thresholdBytes) || !response.body) return;
      const encoding = negotiateEncoding(request.headers.get('accept-encoding'));
      if (!encoding) return;
      return response.arrayBuffer().then(async (buffer) => {
        const compressed = await compress(encoding, new Uint8Array(buffer));
        const encoded = new fetchAPI.Headers(headers);
        encoded.set('content-encoding', encoding);
        encoded.set('content-length', String(compressed.byteLength));
        setResponse(
          new fetchAPI.Response(compressed as Buffer<ArrayBuffer>, {
            status: response.status,
            statusText: response.statusText,
            headers: encoded,
          }),
        );
      });
    },
  };
}
