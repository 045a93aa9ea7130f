import { z } from 'zod';

/**
 * A namespace's extraction switches, stored as one JSON value of its settings. Rules run
 * whenever the namespace's packs have extractors (unless turned off); the model runs when the
 * gateway has one configured (unless turned off), never sends personal data unless `sendPii`,
 * and stops for the day once `tokenBudget` tokens are spent.
 */
export const extractionSettingsSchema = z
  .object({
    rules: z.boolean().default(true),
    model: z.boolean().default(true),
    /** Overrides the gateway's model name for this namespace (same server). */
    modelName: z.string().min(1).max(200).nullable().default(null),
    sendPii: z.boolean().default(false),
    /** Tokens (in + out) per rolling 24 hours; null: no limit. */
    tokenBudget: z.number().int().positive().nullable().default(null),
    /** Batches of this namespace a worker fleet runs at once. */
    concurrency: z.number().int().min(1).max(64).default(2),
  })
  .strict();

export type ExtractionSettings = z.output<typeof extractionSettingsSchema>;

export const DEFAULT_EXTRACTION_SETTINGS: ExtractionSettings = extractionSettingsSchema.parse({});

/** Stored JSON (possibly from an older version) read leniently: unknown or bad keys fall back. */
export function readExtractionSettings(stored: unknown): ExtractionSettings {
  if (!stored || typeof stored !== 'object') return DEFAULT_EXTRACTION_SETTINGS;
  const merged: Record<string, unknown> = { ...DEFAULT_EXTRACTION_SETTINGS };
  for (const [key, value] of Object.entries(stored)) {
    const field = extractionSettingsSchema.shape[key as keyof ExtractionSettings];
    if (field?.safeParse(value).success) merged[key] = value;
  }
  return extractionSettingsSchema.parse(merged);
}
