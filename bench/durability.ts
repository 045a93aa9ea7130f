/**
 * The database's durability for a measurement: the bench's native server runs with fsync,
 * full-page writes and synchronous commit off (a throwaway cluster), which hides what a
 * production server pays per commit and per page written. `withDurability` turns all three on
 * for the span of one measurement and restores what was there before (server-wide settings, by
 * ALTER SYSTEM and a reload: the bench's role is a superuser on its own cluster).
 */
import type { GatewayProcess } from './gateway-process.js';

const SETTINGS = ['fsync', 'full_page_writes', 'synchronous_commit'] as const;

type Settings = Record<(typeof SETTINGS)[number], string>;

async function current(gateway: GatewayProcess): Promise<Settings> {
  const rows = await gateway.query<{ name: string; setting: string }>(
    `/* benchDurabilitySettings */ SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])`,
    [[...SETTINGS]],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.setting])) as Settings;
}

async function apply(gateway: GatewayProcess, settings: Settings): Promise<void> {
  for (const name of SETTINGS) {
    // ALTER SYSTEM takes no parameters; the values are fixed words from pg_settings or 'on'.
    const value = settings[name];
    if (!/^[a-z_]+$/.test(value)) throw new Error(`unexpected ${name} setting ${value}`);
    await gateway.query(`ALTER SYSTEM SET ${name} = '${value}'`);
  }
  await gateway.query(`/* benchDurabilityReload */ SELECT pg_reload_conf()`);
  // A reload is signalled, not awaited: wait until this session sees the new values.
  for (let i = 0; i < 100; i++) {
    const now = await current(gateway);
    if (SETTINGS.every((n) => now[n] === settings[n])) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the durability settings did not take effect');
}

/** Runs `fn` with durability on, then puts the previous settings back (also when it fails). */
export async function withDurability<T>(gateway: GatewayProcess, fn: () => Promise<T>): Promise<T> {
  const before = await current(gateway);
  await apply(gateway, { fsync: 'on', full_page_writes: 'on', synchronous_commit: 'on' });
  try {
    return await fn();
  } finally {
    await apply(gateway, before);
  }
}
