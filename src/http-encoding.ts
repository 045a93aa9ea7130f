/**
 * Content negotiation of `accept-encoding` for what the gateway sends (RFC 9110 §12.5.3):
 * brotli, then gzip, then the bytes themselves, as far as the client's q-values allow. A client
 * that sends no accept-encoding gets the bytes themselves.
 */
import Negotiator from 'negotiator';

export type ContentEncoding = 'br' | 'gzip';
export type Coding = ContentEncoding | 'identity';

/** Server preference among equally acceptable codings: the smallest first. */
const PREFERRED: readonly Coding[] = ['br', 'gzip', 'identity'];

/** The codings the request accepts, best first; the bytes themselves last even when refused. */
export function acceptedCodings(acceptEncoding: string | string[] | null | undefined): Coding[] {
  const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding ?? undefined } });
  const accepted = negotiator.encodings(PREFERRED, { preferred: PREFERRED }) as Coding[];
  // `identity;q=0` with nothing else we have: the bytes all the same, as most servers answer.
  return accepted.includes('identity') ? accepted : [...accepted, 'identity'];
}

/** The one encoding to compress a response with, or null for the bytes themselves. */
export function negotiateEncoding(
  acceptEncoding: string | string[] | null | undefined,
): ContentEncoding | null {
  const [best] = acceptedCodings(acceptEncoding);
  return best === 'identity' || best === undefined ? null : best;
}

/** `Vary: Accept-Encoding` added to whatever the header already names. */
export function varyOnAcceptEncoding(vary: string | null | undefined): string {
  if (!vary) return 'Accept-Encoding';
  if (vary.split(',').some((name) => ['accept-encoding', '*'].includes(name.trim().toLowerCase())))
    return vary;
  return `${vary}, Accept-Encoding`;
}
