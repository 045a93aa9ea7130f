// `node scripts/check-engines.mjs`: every installed package's `engines.node` must accept the
// oldest release of each Node line memgate supports (package.json `engines`), so `npm ci`
// prints no EBADENGINE on any of them. Reads package-lock.json; needs no network.
import { readFileSync } from 'node:fs';
import semver from 'semver';

const root = new URL('..', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8'));
const supported = manifest.engines.node;
// The first release of each supported line, e.g. "^20.19.0 || ^22.13.0 || >=24.0.0" → 20.19.0, 22.13.0, 24.0.0.
const lines = new semver.Range(supported).set.map((comparators) => comparators[0].semver.version);

const problems = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  const wanted = entry.engines?.node;
  if (!path || typeof wanted !== 'string') continue;
  const rejected = lines.filter((version) => !semver.satisfies(version, wanted));
  if (rejected.length) {
    problems.push(
      `${path.replace(/^.*node_modules\//, '')}@${entry.version} wants node ${wanted}: not ${rejected.join(', ')} (${path})`,
    );
  }
}
if (problems.length) {
  process.stderr.write(
    `Packages whose engines exclude a supported Node line (${supported}):\n${problems.join('\n')}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `engines: all ${Object.keys(lock.packages).length - 1} packages accept Node ${lines.join(', ')}\n`,
);
