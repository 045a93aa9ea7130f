#!/usr/bin/env bash
# Runs a command against three throwaway native PostgreSQL 15 + pgvector servers on loopback:
#
#   PRIMARY  wal_level = logical, replication slots and WAL senders, pg_hba lets 127.0.0.1
#            replicate; the memgate superuser role and database as in ci-native-postgres.sh
#   REPLICA  a streaming replica of PRIMARY (pg_basebackup -R over 127.0.0.1 with a
#            replication slot, hot_standby = on), on its own port
#   OTHER    a standalone server like PRIMARY (same role, database and extensions) but with
#            the default wal_level = replica: the target of a namespace moved by logical
#            replication, and a source such a move must refuse
#
#   scripts/with-cluster.sh CMD...     e.g. scripts/with-cluster.sh npm run -s test:cluster
#
# CMD runs with DATABASE_URL and MEMGATE_TEST_PRIMARY_URL (the primary), MEMGATE_TEST_REPLICA_URL
# and MEMGATE_TEST_OTHER_URL exported, each for the memgate role's database; the servers are
# stopped and deleted however CMD ends, and the script exits with CMD's status. The memgate role
# is a superuser everywhere, so tests may call pg_wal_replay_pause() / pg_wal_replay_resume()
# on the replica. Durability is off as in ci-native-postgres.sh (fsync, synchronous_commit,
# full_page_writes); the replica is asynchronous.
#
# Environment (optional): NATIVE_PG_PORT (first port to try, default 55432), NATIVE_PG_USER,
# NATIVE_PG_PASSWORD, NATIVE_PG_DB, as for ci-native-postgres.sh.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=ci-native-postgres.sh
source "$(dirname "$0")/ci-native-postgres.sh"
# shellcheck disable=SC2034 # read by log() in ci-native-postgres.sh
LOG_TAG=cluster

# What a primary of logical and physical replication needs, on top of the test settings.
REPLICATION_CONF="
# memgate cluster: a primary for streaming and logical replication
wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
wal_keep_size = 256MB
hot_standby = on"

# The memgate role (a superuser) may open replication connections from 127.0.0.1 with its
# password; initdb's own entry may already say so, this one does not rely on it.
allow_replication() {
  local hba="$1/data/pg_hba.conf"
  if ! grep -qE '^host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32' "$hba"; then
    echo 'host replication all 127.0.0.1/32 scram-sha-256' >>"$hba"
  fi
  "${PSQL[@]}" -d postgres -c 'SELECT pg_reload_conf()' >/dev/null
}

# A streaming replica of the server on port $1: sets REPLICA_PORT and REPLICA_DIR.
start_replica() {
  local primary_port="$1" started=$SECONDS
  reserve_cluster "$$"
  REPLICA_PORT="$PORT"
  REPLICA_DIR="$DIR"
  # -R writes primary_conninfo (with the password) and standby.signal; -C -S keeps the WAL the
  # replica has not received yet on the primary.
  as_owner env PGPASSWORD="$PG_PASSWORD" "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$primary_port" \
    -U "$PG_USER" -D "$REPLICA_DIR/data" -R -X stream -c fast -C -S "memgate_replica_$REPLICA_PORT"
  # The copied postgresql.conf names the primary's port and socket: later lines win.
  {
    test_server_conf "$REPLICA_PORT" "$REPLICA_DIR"
    printf '\n# memgate cluster: a streaming replica\nhot_standby = on\n'
  } >>"$REPLICA_DIR/data/postgresql.conf"
  start_server "$REPLICA_PORT" "$REPLICA_DIR"

  local streaming="" i
  for ((i = 0; i < 100; i++)); do
    streaming="$("${PSQL[@]}" -d postgres -Atc \
      "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")"
    [[ "$streaming" == 1 ]] && break
    sleep 0.1
  done
  [[ "$streaming" == 1 ]] || die "the replica on port $REPLICA_PORT did not start streaming"
  log "replica on 127.0.0.1:$REPLICA_PORT streaming from 127.0.0.1:$primary_port (data in $REPLICA_DIR, up in $((SECONDS - started)) s)"
}

main() {
  [[ $# -gt 0 ]] || { sed -n '2,21p' "$0" >&2; exit 2; }
  local started=$SECONDS ports=()
  ensure_postgres
  # Stopped in reverse order: the replica before its primary.
  trap 'for ((i = ${#ports[@]} - 1; i >= 0; i--)); do stop_cluster "${ports[i]}"; done' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  EXTRA_CONF="$REPLICATION_CONF"
  start_cluster "$$"
  ports+=("$PORT")
  local primary_port="$PORT" primary_url="$DATABASE_URL"
  allow_replication "$DIR"

  start_replica "$primary_port"
  ports+=("$REPLICA_PORT")

  EXTRA_CONF=""
  start_cluster "$$"
  ports+=("$PORT")
  local other_url="$DATABASE_URL"

  export DATABASE_URL="$primary_url"
  export MEMGATE_TEST_PRIMARY_URL="$primary_url"
  export MEMGATE_TEST_REPLICA_URL
  MEMGATE_TEST_REPLICA_URL="$(memgate_url "$REPLICA_PORT")"
  export MEMGATE_TEST_OTHER_URL="$other_url"
  log "up in $((SECONDS - started)) s"
  log "MEMGATE_TEST_PRIMARY_URL=$MEMGATE_TEST_PRIMARY_URL (also DATABASE_URL)"
  log "MEMGATE_TEST_REPLICA_URL=$MEMGATE_TEST_REPLICA_URL"
  log "MEMGATE_TEST_OTHER_URL=$MEMGATE_TEST_OTHER_URL"
  log "running: $*"
  local status=0
  "$@" || status=$?
  exit "$status"
}

main "$@"
