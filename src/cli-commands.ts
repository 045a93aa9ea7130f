// Commands contributed by other modules register themselves when imported here; they import
// `registerCommand` from ./cli-registry.js (importing ./cli.js from a command deadlocks).
import './cli/import-command.js';
import './cli/backup-command.js';
import './cli/export-command.js';
import './cli/move-command.js';
import './cli/reindex-command.js';
import './cli/extract-command.js';
import './cli/text-search-command.js';
import './cli/eval-command.js';
import './cli/mcp-command.js';
import './cli/token-command.js';
import './cli/bench-command.js';
