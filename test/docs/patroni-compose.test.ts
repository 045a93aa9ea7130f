/**
 * deploy/patroni holds together: the compose file's services, volumes and secrets exist where
 * they are named, the Patroni nodes are HAProxy's PostgreSQL servers under their own names,
 * and the gateways' URLs reach HAProxy's primary and replica frontends. The files are read as
 * a deployment reads them; nothing is started.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const dir = join(process.cwd(), 'deploy', 'patroni');
const read = (name: string) => readFileSync(join(dir, name), 'utf8');

interface Service {
  build?: { context?: string; dockerfile?: string; target?: string };
  image?: string;
  environment?: Record<string, string>;
  depends_on?: string[] | Record<string, { condition: string }>;
  volumes?: string[];
  secrets?: string[];
  ports?: string[];
}

interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, unknown>;
}

const compose = parse(read('docker-compose.yml'), { merge: true }) as Compose;
const services = compose.services;

/** HAProxy's sections: `listen NAME` with its bind port, check and servers. */
interface Listen {
  port: number;
  check: string | null;
  servers: { name: string; host: string; port: number; checkPort: number | null }[];
}

function haproxySections(text: string): Map<string, Listen> {
  const sections = new Map<string, Listen>();
  let current: Listen | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const words = line.split(/\s+/);
    if (!raw.startsWith(' ')) {
      current = words[0] === 'listen' ? { port: 0, check: null, servers: [] } : null;
      if (current) sections.set(words[1]!, current);
      continue;
    }
    if (!current) continue;
    if (words[0] === 'bind') current.port = Number(words[1]!.split(':').pop());
    if (words[0] === 'option' && words[1] === 'httpchk') current.check = words.slice(2).join(' ');
    if (words[0] === 'server') {
      const [host, port] = words[2]!.split(':');
      const at = words.indexOf('port');
      current.servers.push({
        name: words[1]!,
        host: host!,
        port: Number(port),
        checkPort: at > 0 ? Number(words[at + 1]) : null,
      });
    }
  }
  return sections;
}

const haproxy = haproxySections(read('haproxy.cfg'));

/** The section whose health check asks Patroni for `path`. */
function frontendChecking(path: string): Listen {
  const found = [...haproxy.values()].find((s) => s.check?.endsWith(` ${path}`));
  if (!found) throw new Error(`haproxy.cfg has no section checking ${path}`);
  return found;
}

const patroniNodes = Object.entries(services).filter(([, s]) => s.build?.target === 'patroni');
const gateways = Object.entries(services).filter(([, s]) => s.environment?.DATABASE_URL);
const dependencies = (s: Service) =>
  Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});

describe('deploy/patroni', () => {
  it('names only services, volumes and secrets it defines', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const dependency of dependencies(service)) {
        expect(Object.keys(services), `${name} depends on ${dependency}`).toContain(dependency);
      }
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('.'))
          expect(existsSync(join(dir, source)), `${name} mounts ${source}`).toBe(true);
        else expect(Object.keys(compose.volumes ?? {}), `${name} mounts ${source}`).toContain(source);
      }
      for (const secret of service.secrets ?? []) {
        expect(Object.keys(compose.secrets ?? {}), `${name} reads ${secret}`).toContain(secret);
      }
    }
  });

  it('builds only targets the Containerfile has', () => {
    const targets = [...read('Containerfile').matchAll(/^FROM \S+ AS (\S+)$/gm)].map((m) => m[1]);
    for (const [name, service] of Object.entries(services)) {
      if (service.build?.dockerfile === 'Containerfile') {
        expect(targets, `${name}'s target`).toContain(service.build.target);
      }
    }
  });

  it('runs at least two Patroni nodes, each named after its service, each on its own volume', () => {
    expect(patroniNodes.length).toBeGreaterThanOrEqual(2);
    const volumes = new Set<string>();
    for (const [name, node] of patroniNodes) {
      expect(node.environment?.PATRONI_NAME, `${name}'s PATRONI_NAME`).toBe(name);
      const data = node.volumes?.find((v) => v.endsWith(':/var/lib/postgresql/data'));
      expect(data, `${name}'s data volume`).toBeDefined();
      volumes.add(data!);
    }
    expect(volumes.size).toBe(patroniNodes.length);
  });

  it("puts every Patroni node behind HAProxy's primary and replica frontends, checked on its REST port", () => {
    const nodes = patroniNodes.map(([name]) => name).sort();
    for (const path of ['/primary', '/replica']) {
      const frontend = frontendChecking(path);
      expect(frontend.servers.map((s) => s.name).sort(), `servers checked on ${path}`).toEqual(nodes);
      for (const server of frontend.servers) {
        expect(server).toMatchObject({ host: server.name, port: 5432, checkPort: 8008 });
      }
    }
  });

  it("points the gateways' DATABASE_URL at the primary frontend and their read URLs at the replicas", () => {
    expect(gateways.length).toBeGreaterThanOrEqual(2);
    const primary = frontendChecking('/primary');
    const replicas = frontendChecking('/replica');
    const bootstrap = read('post-bootstrap.sh');
    for (const [name, gateway] of gateways) {
      const env = gateway.environment!;
      const write = new URL(env.DATABASE_URL!);
      const reads = env.MEMGATE_READ_DATABASE_URLS!.split(',').map((u) => new URL(u.trim()));
      expect(services[write.hostname], `${name}: ${write.hostname} is a service`).toBeDefined();
      expect(Number(write.port), `${name}'s DATABASE_URL port`).toBe(primary.port);
      for (const url of reads) {
        expect(url.hostname, `${name}'s read URL host`).toBe(write.hostname);
        expect(Number(url.port), `${name}'s read URL port`).toBe(replicas.port);
      }
      // The role and database post-bootstrap.sh creates are the ones the gateways log in to.
      for (const url of [write, ...reads]) {
        expect(bootstrap).toContain(`CREATE ROLE ${url.username} LOGIN`);
        expect(bootstrap).toContain(`CREATE DATABASE ${url.pathname.slice(1)} OWNER ${url.username}`);
      }
    }
  });

  it("balances HTTP over exactly the gateways, on the port HAProxy's service publishes", () => {
    const http = [...haproxy.values()].find((s) => s.servers.some((server) => server.port === 4000));
    expect(http).toBeDefined();
    expect(http!.servers.map((s) => s.host).sort()).toEqual(gateways.map(([name]) => name).sort());
    const proxy = Object.entries(services).find(([, s]) => s.build?.target === 'haproxy');
    expect(proxy).toBeDefined();
    const published = (proxy![1].ports ?? []).map((p) => Number(p.split(':').pop()));
    expect(published).toContain(http!.port);
    expect(proxy![1].volumes).toContain('./haproxy.cfg:/etc/haproxy/haproxy.cfg:ro');
    expect(read('Containerfile')).toContain('"-f", "/etc/haproxy/haproxy.cfg"');
  });

  it("gives Patroni the etcd service's address and the post-bootstrap script the image installs", () => {
    const patroni = parse(read('patroni.yml')) as {
      etcd3: { hosts: string };
      bootstrap: { post_bootstrap: string };
    };
    const [host, port] = patroni.etcd3.hosts.split(':');
    const etcd = services[host!];
    expect(etcd, `etcd3.hosts names the service ${host}`).toBeDefined();
    expect(etcd!.environment?.ETCD_ADVERTISE_CLIENT_URLS).toBe(`http://${host}:${port}`);
    expect(read('Containerfile')).toContain(`COPY post-bootstrap.sh ${patroni.bootstrap.post_bootstrap}`);
  });

  const haproxyBinary = ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy'].find((p) => existsSync(p));
  it.skipIf(!haproxyBinary)('haproxy.cfg passes `haproxy -c` (where HAProxy is installed)', () => {
    expect(() => execFileSync(haproxyBinary!, ['-c', '-q', '-f', join(dir, 'haproxy.cfg')])).not.toThrow();
  });
});
