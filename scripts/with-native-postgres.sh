#!/usr/bin/env bash
# Runs a command against a throwaway native PostgreSQL 15 + pgvector cluster:
#   scripts/with-native-postgres.sh npm test
# See scripts/ci-native-postgres.sh for what it does and the settings it reads.
set -euo pipefail
exec "$(dirname "$0")/ci-native-postgres.sh" run "$@"
