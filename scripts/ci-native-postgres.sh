#!/usr/bin/env bash
# Native PostgreSQL 15 + pgvector + pg_trgm for tests and CI, on Debian bookworm.
#
#   scripts/ci-native-postgres.sh install       install PG 15, its pg_dump and pgvector (each skipped when present)
#   scripts/ci-native-postgres.sh run CMD...    install, start a throwaway cluster, run CMD with
#                                               DATABASE_URL exported, then stop the cluster and
#                                               delete it, however CMD ends; exits with CMD's status
#   scripts/with-native-postgres.sh CMD...      the same as `run`
#
# scripts/with-cluster.sh and scripts/with-patroni.sh source this file for its functions (the
# dispatch at its end runs only when it is executed).
#
# For an interactive session: scripts/with-native-postgres.sh bash
#
# Environment (all optional):
#   NATIVE_PG_PORT      first port to try (default 55432); the next free one is taken when busy
#   NATIVE_PG_USER      role in DATABASE_URL, a superuser: tests create databases (default memgate)
#   NATIVE_PG_PASSWORD  its password (default memgate)
#   NATIVE_PG_DB        database in DATABASE_URL (default memgate)
#
# Debian does not package pgvector for PostgreSQL 15 in bookworm, so it is built from Debian's
# trixie source package (15-35 s measured; well under a minute). Installing needs root; once pgvector is there, `run`
# also works for a non-root user, whose cluster then runs as that user.
set -euo pipefail

PG_BIN=/usr/lib/postgresql/15/bin
PG_CONFIG="$PG_BIN/pg_config"
PORT_START="${NATIVE_PG_PORT:-55432}"
PG_USER="${NATIVE_PG_USER:-memgate}"
PG_PASSWORD="${NATIVE_PG_PASSWORD:-memgate}"
PG_DB="${NATIVE_PG_DB:-memgate}"
STATE_DIR=/tmp
SRC_LIST=/etc/apt/sources.list.d/memgate-trixie-src.sources

log() { echo "[${LOG_TAG:-native-pg}] $*" >&2; }
die() { log "error: $*"; exit 1; }

apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 "$@"; }

vector_installed() {
  [[ -x "$PG_CONFIG" ]] && [[ -f "$("$PG_CONFIG" --sharedir)/extension/vector.control" ]]
}

# The deb-src entry reuses the URIs and keyring of the machine's own Debian source list.
write_trixie_src_list() {
  local uris="http://deb.debian.org/debian" keyring="/usr/share/keyrings/debian-archive-keyring.gpg"
  local main=/etc/apt/sources.list.d/debian.sources line
  if [[ -f "$main" ]]; then
    line="$(grep -m1 -E '^URIs:' "$main" || true)"
    [[ -n "$line" ]] && uris="${line#URIs: }"
    line="$(grep -m1 -E '^Signed-By:' "$main" || true)"
    [[ -n "$line" ]] && keyring="${line#Signed-By: }"
  fi
  cat >"$SRC_LIST" <<EOF
# Written by memgate scripts/ci-native-postgres.sh: source of pgvector, built for PostgreSQL 15.
Types: deb-src
URIs: $uris
Suites: trixie
Components: main
Signed-By: $keyring
EOF
}

install_pgvector() {
  if vector_installed; then
    log "pgvector already installed ($("$PG_CONFIG" --sharedir)/extension/vector.control)"
    return
  fi
  [[ $EUID -eq 0 ]] || die "pgvector is missing and installing it needs root"

  # Two runs at once (two engineers, or a retried CI step) must not race on apt or make install.
  exec 9>"$STATE_DIR/memgate-native-pg-install.lock"
  flock 9
  if vector_installed; then exec 9>&-; return; fi

  local started=$SECONDS build
  log "installing pgvector for PostgreSQL 15 from Debian trixie sources"
  write_trixie_src_list
  apt_get update -qq
  local pkgs=(postgresql-server-dev-15)
  [[ -x "$PG_BIN/initdb" ]] || pkgs+=(postgresql-15)
  command -v make >/dev/null && command -v gcc >/dev/null || pkgs+=(build-essential)
  apt_get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null

  build="$(mktemp -d)"
  # apt downloads as _apt when it can write there (otherwise it warns and downloads as root).
  if id _apt >/dev/null 2>&1; then chown _apt "$build"; fi
  (
    cd "$build"
    apt_get source --download-only -qq pgvector
    local orig=(pgvector_*.orig.tar.*)
    [[ -f "${orig[0]}" ]] || die "no pgvector orig tarball downloaded"
    mkdir src
    tar -xf "${orig[0]}" -C src --strip-components=1
    make -C src -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >/dev/null
    make -C src -s install PG_CONFIG="$PG_CONFIG" >/dev/null
    log "built $(basename "${orig[0]}")"
  )
  rm -rf "$build"
  # Keep later `apt-get update`s of this machine as fast as before.
  rm -f "$SRC_LIST"
  exec 9>&-
  vector_installed || die "pgvector build finished but vector.control is not installed"
  log "pgvector installed in $((SECONDS - started)) s"
}

ensure_postgres() {
  # pg_dump 15 (postgresql-client-15) is what `memgate backup` runs against this server.
  if [[ ! -x "$PG_BIN/initdb" || ! -x "$PG_BIN/pg_dump" ]]; then
    [[ $EUID -eq 0 ]] || die "PostgreSQL 15 is not installed and installing it needs root"
    apt_get update -qq
    apt_get install -y -qq --no-install-recommends postgresql-15 postgresql-client-15 >/dev/null
  fi
  "$PG_BIN/pg_dump" --version | grep -q '(PostgreSQL) 15\.' || die "pg_dump in $PG_BIN is not version 15"
  install_pgvector
}

# Runs a PostgreSQL binary as the cluster owner: `postgres` when we are root (initdb refuses
# root), otherwise the calling user.
as_owner() {
  if [[ $EUID -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

state_file() { echo "$STATE_DIR/memgate-native-pg-$1.env"; }

# Stops and deletes the cluster recorded for a port. Safe to call twice.
stop_cluster() {
  local port="$1" file dir
  file="$(state_file "$port")"
  [[ -f "$file" ]] || return 0
  dir="$(sed -n 's/^NATIVE_PG_DIR=//p' "$file")"
  if [[ -n "$dir" && -d "$dir/data" ]]; then
    as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  if [[ "$dir" == "$STATE_DIR"/memgate-pg.* ]]; then rm -rf "$dir"; fi
  rm -f "$file"
  log "stopped and removed cluster on port $port"
}

# A state file whose owner process is gone belongs to a run that was killed: clean it up so
# that re-running works. A live owner's cluster is left alone and another port is taken.
reap_stale() {
  local port="$1" file owner
  file="$(state_file "$port")"
  [[ -f "$file" ]] || return 0
  owner="$(sed -n 's/^NATIVE_PG_OWNER=//p' "$file")"
  if [[ -z "$owner" ]] || ! kill -0 "$owner" 2>/dev/null; then
    log "cleaning up cluster of a finished run on port $port"
    stop_cluster "$port"
  fi
}

# Takes the first free port from PORT_START and a throwaway directory, recorded in a state
# file for stop_cluster and reap_stale; sets PORT and DIR. $1: pid of the run that owns it.
reserve_cluster() {
  local owner="$1" port
  port="$PORT_START"
  while :; do
    reap_stale "$port"
    if [[ ! -f "$(state_file "$port")" ]] && ! port_busy "$port"; then break; fi
    port=$((port + 1))
    ((port < PORT_START + 50)) || die "no free port in $PORT_START..$((PORT_START + 49))"
  done

  DIR="$(mktemp -d "$STATE_DIR/memgate-pg.XXXXXX")"
  PORT="$port"
  printf 'NATIVE_PG_DIR=%s\nNATIVE_PG_OWNER=%s\n' "$DIR" "$owner" >"$(state_file "$PORT")"
  if [[ $EUID -eq 0 ]]; then chown postgres: "$DIR"; fi
}

# The settings every throwaway test server gets: durability off, room for one database per
# test file. $1: port, $2: socket directory.
test_server_conf() {
  cat <<EOF

# memgate native test cluster
listen_addresses = '127.0.0.1'
port = $1
unix_socket_directories = '$2'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = 256MB
maintenance_work_mem = 512MB
EOF
}

# Starts the server in $2/data on port $1, or prints its log, removes it and fails.
start_server() {
  if ! as_owner "$PG_BIN/pg_ctl" -D "$2/data" -l "$2/postgres.log" -w -t 60 start >/dev/null; then
    cat "$2/postgres.log" >&2 || true
    stop_cluster "$1"
    die "PostgreSQL did not start"
  fi
}

# Sets PSQL: psql as the postgres superuser over the socket in $1 on port $2.
set_psql() {
  PSQL=(env PGOPTIONS="-c client_min_messages=warning" "$PG_BIN/psql" -X -q -h "$1" -p "$2"
    -U postgres -v ON_ERROR_STOP=1)
}

# The extensions in template1 (databases the tests create from it inherit them), the memgate
# superuser and its database. $@: a psql command that reaches the server as postgres.
create_memgate_role() {
  "$@" -d template1 -v user="$PG_USER" -v pass="$PG_PASSWORD" -v db="$PG_DB" <<'SQL'
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE ROLE :"user" LOGIN SUPERUSER PASSWORD :'pass';
CREATE DATABASE :"db" OWNER :"user" TEMPLATE template1;
SQL
  "$@" -d "$PG_DB" -c 'CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm;'
}

# The URL of the memgate role's database on 127.0.0.1, port $1.
memgate_url() {
  printf 'postgres://%s:%s@127.0.0.1:%s/%s' "$(urlencode "$PG_USER")" "$(urlencode "$PG_PASSWORD")" "$1" \
    "$(urlencode "$PG_DB")"
}

# Starts a cluster; sets PORT, DIR and DATABASE_URL. $1: pid of the run that owns it. The
# settings in EXTRA_CONF (optional) go into postgresql.conf after the test settings.
start_cluster() {
  local owner="$1" started=$SECONDS
  reserve_cluster "$owner"

  local pwfile="$DIR/pw"
  printf '%s\n' "$PG_PASSWORD" >"$pwfile"
  if [[ $EUID -eq 0 ]]; then chown postgres: "$pwfile"; fi
  as_owner "$PG_BIN/initdb" -D "$DIR/data" -U postgres --auth-local=trust \
    --auth-host=scram-sha-256 --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"

  {
    test_server_conf "$PORT" "$DIR"
    if [[ -n "${EXTRA_CONF:-}" ]]; then printf '%s\n' "$EXTRA_CONF"; fi
  } >>"$DIR/data/postgresql.conf"
  start_server "$PORT" "$DIR"

  set_psql "$DIR" "$PORT"
  create_memgate_role "${PSQL[@]}"

  DATABASE_URL="$(memgate_url "$PORT")"
  log "PostgreSQL $("${PSQL[@]}" -d "$PG_DB" -Atc 'SHOW server_version') with vector $("${PSQL[@]}" -d "$PG_DB" -Atc "SELECT extversion FROM pg_extension WHERE extname = 'vector'") on 127.0.0.1:$PORT (data in $DIR, up in $((SECONDS - started)) s)"
}

urlencode() {
  local s="$1" out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "$c" in
      [a-zA-Z0-9._~-]) out+="$c" ;;
      *) out+="$(printf '%%%02X' "'$c")" ;;
    esac
  done
  printf '%s' "$out"
}

cmd_run() {
  [[ $# -gt 0 ]] || die "usage: $0 run COMMAND [ARGS...]"
  ensure_postgres
  PORT=""
  trap 'if [[ -n "$PORT" ]]; then stop_cluster "$PORT"; fi' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  start_cluster "$$"
  export DATABASE_URL
  log "DATABASE_URL=$DATABASE_URL"
  log "running: $*"
  local status=0
  "$@" || status=$?
  exit "$status"
}

# Executed, not sourced: dispatch.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  case "${1:-}" in
    install) ensure_postgres ;;
    run) shift; cmd_run "$@" ;;
    *)
      sed -n '2,23p' "$0" >&2
      exit 2
      ;;
  esac
fi
