/**
 * Local mode (no MEMGATE_TOKENS_FILE) serves every request as one full-access principal, so
 * it may only listen where nobody else can connect: a loopback address.
 */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  const v4 = h.startsWith('::ffff:') ? h.slice('::ffff:'.length) : h;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export function assertBindAllowed(config: { host: string; tokensFile: string | undefined }): void {
  if (config.tokensFile || isLoopbackHost(config.host)) return;
  throw new Error(
    `Refusing to bind ${config.host} in local mode (no MEMGATE_TOKENS_FILE): local mode serves one ` +
      'full-access principal and may only listen on loopback. Configure tokens (`memgate token create`) ' +
      'or use MEMGATE_HOST=127.0.0.1.',
  );
}
