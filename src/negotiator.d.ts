// The part of `negotiator` (1.x, CommonJS, no bundled types) the gateway uses.
declare module 'negotiator' {
  class Negotiator {
    constructor(request: { headers: Record<string, string | string[] | undefined> });
    /** The accepted encodings among `available`, best first; ties broken by `options.preferred`. */
    encodings(available?: readonly string[], options?: { preferred?: readonly string[] }): string[];
  }
  export = Negotiator;
}
