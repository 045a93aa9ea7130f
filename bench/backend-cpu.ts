/**
 * CPU time of the PostgreSQL backends serving the run's database, read from /proc: on native
 * PostgreSQL the database's work runs in those processes, not in the gateway's, so a write's
 * cost in CPU is the gateway's plus theirs. Only for a server on this machine (Linux): when a
 * backend's process cannot be read as a postgres process, there is no figure (null).
 */
import { readFileSync } from 'node:fs';
import type { GatewayProcess } from './gateway-process.js';

/** USER_HZ: the unit of utime and stime in /proc/<pid>/stat (100 on every Linux port in use). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds so far of each backend of the database, by process id; null when unreadable. */
export async function backendCpu(gateway: GatewayProcess): Promise<Map<number, number> | null> {
  if (process.platform !== 'linux') return null;
  const rows = await gateway.query<{ pid: number }>(
    `/* benchBackendPids */ SELECT pid FROM pg_stat_activity WHERE datname = current_database()`,
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres')) return null;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After "pid (comm) ": state is field 3, utime field 14, stime field 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      cpu.set(pid, ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND);
    } catch {
      return null;
    }
  }
  return cpu;
}

/** CPU the backends spent between two readings (a backend new since the first counts whole). */
export function backendCpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, ms] of after) spent += ms - (before.get(pid) ?? 0);
  return spent;
}
