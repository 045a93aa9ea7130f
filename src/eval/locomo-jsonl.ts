/**
 * LoCoMo conversation → JSON Lines of ObservationInput, one observation per turn, for
 * `memgate import`:
 *
 *   npm run -s locomo:jsonl -- path/to/locomo/26.json [--out 26.jsonl]
 *
 * - source `{system: "locomo", stream: <conversation>, externalId: <dia_id>}`, where the
 *   conversation is the file's `sample_id` or else its base name ("26"); the observation id is
 *   then deterministic, so an evaluation can map evidence dia_ids to observations.
 * - `occurredAt`: the session's `session_N_date_time` ("1:47 pm on 18 May, 2023"), read as UTC
 *   (the data carries no zone), plus one second per turn so the order within a session is kept
 *   (`turnSpacingMs` 0 gives a session's turns one timestamp, as minute-resolution exports do).
 * - kind `message`, actor `{type: "person", id: speaker}`, content `"<speaker>: <text>"` plus
 *   ` [image: <blip_caption>]` when the turn shared a picture.
 * - data `{sessionId: "<conversation>:session_N", diaId, session: N}`.
 */
import { basename, extname } from 'node:path';

export interface LocomoTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
  img_url?: string[];
}

export interface LocomoObservation {
  source: { system: 'locomo'; stream: string; externalId: string };
  kind: 'message';
  occurredAt: string;
  actor: { type: 'person'; id: string };
  content: string;
  data: { sessionId: string; diaId: string; session: number };
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

const SESSION_TIME = /^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i;

/** "1:47 pm on 18 May, 2023" → 2023-05-18T13:47:00.000Z (12 am is midnight, 12 pm noon). */
export function parseLocomoDateTime(text: string): Date {
  const m = SESSION_TIME.exec(text);
  if (!m) throw new Error(`unrecognised LoCoMo session time ${JSON.stringify(text)}`);
  const [, hh, mm, ampm, dd, monthName, yyyy] = m;
  const hour12 = Number(hh);
  const minute = Number(mm);
  const day = Number(dd);
  const year = Number(yyyy);
  const month = MONTHS.findIndex(
    (name) => name.startsWith(monthName!.toLowerCase()) && monthName!.length >= 3,
  );
  if (hour12 < 1 || hour12 > 12 || minute > 59 || month < 0) {
    throw new Error(`impossible LoCoMo session time ${JSON.stringify(text)}`);
  }
  const hour = (hour12 % 12) + (ampm!.toLowerCase() === 'p' ? 12 : 0);
  const date = new Date(Date.UTC(year, month, day, hour, minute));
  if (date.getUTCDate() !== day) throw new Error(`impossible LoCoMo date ${JSON.stringify(text)}`);
  return date;
}

/** Sessions present in the file (a `session_N` list), in numeric order. */
export function sessionNumbers(conversation: Record<string, unknown>): number[] {
  return Object.keys(conversation)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null && Array.isArray(conversation[m[0]]))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
}

/** Every turn of a conversation as an observation, sessions in order, turns in order. */
export function locomoToObservations(
  raw: unknown,
  conversationId: string,
  turnSpacingMs = 1000,
): LocomoObservation[] {
  if (raw === null || typeof raw !== 'object') throw new Error('a LoCoMo file holds one JSON object');
  // The full dataset nests the sessions under `conversation`; the split files do not.
  const root = raw as Record<string, unknown>;
  const conversation = (
    root.conversation && typeof root.conversation === 'object' ? root.conversation : root
  ) as Record<string, unknown>;
  const out: LocomoObservation[] = [];
  for (const n of sessionNumbers(conversation)) {
    const when = conversation[`session_${n}_date_time`];
    if (typeof when !== 'string') throw new Error(`session_${n} has no session_${n}_date_time`);
    const start = parseLocomoDateTime(when).getTime();
    const turns = conversation[`session_${n}`] as LocomoTurn[];
    turns.forEach((turn, i) => {
      if (
        typeof turn?.speaker !== 'string' ||
        typeof turn.dia_id !== 'string' ||
        typeof turn.text !== 'string'
      ) {
        throw new Error(`session_${n} turn ${i} lacks speaker, dia_id or text`);
      }
      const caption =
        typeof turn.blip_caption === 'string' && turn.blip_caption.trim() !== '' ? turn.blip_caption : null;
      out.push({
        source: { system: 'locomo', stream: conversationId, externalId: turn.dia_id },
        kind: 'message',
        occurredAt: new Date(start + i * turnSpacingMs).toISOString(),
        actor: { type: 'person', id: turn.speaker },
        content: `${turn.speaker}: ${turn.text}${caption ? ` [image: ${caption}]` : ''}`,
        data: { sessionId: `${conversationId}:session_${n}`, diaId: turn.dia_id, session: n },
      });
    });
  }
  return out;
}

/** `sample_id` when the file has one, else the file's base name without extension. */
export function conversationIdOf(raw: unknown, file: string): string {
  const sampleId = raw && typeof raw === 'object' ? (raw as { sample_id?: unknown }).sample_id : undefined;
  return typeof sampleId === 'string' && sampleId !== '' ? sampleId : basename(file, extname(file));
}
