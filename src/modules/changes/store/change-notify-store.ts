/**
 * The LISTEN/NOTIFY channel committed changes travel on. The database itself sends on it
 * (triggers of migration 011), in payloads of ids well below NOTIFY's 8000-byte limit.
 */
export const CHANGE_CHANNEL = 'memgate_changes';
