#!/usr/bin/env bash
# Runs a command against a throwaway high-availability PostgreSQL 15 + pgvector cluster on
# loopback: one etcd, two Patroni nodes (n1, n2; synchronous replication, so a failover loses no
# acknowledged commit) and HAProxy in front, routing by Patroni's REST health checks.
#
#   scripts/with-patroni.sh CMD...            e.g. scripts/with-patroni.sh npm run -s test:cluster
#   scripts/with-patroni.sh --ctl crash NODE  kill -9 NODE's Patroni and postmaster (NODE: n1, n2
#                                             or `leader`; prints the node's name), as a machine
#                                             that dies would; for CMD, with MEMGATE_TEST_PATRONI_DIR set
#   scripts/with-patroni.sh --ctl start NODE  start NODE's Patroni again: it rejoins as a replica
#
# CMD runs with these exported (URLs for the memgate superuser role and its database):
#   MEMGATE_TEST_PATRONI_URL           HAProxy's frontend to the current primary (GET /primary)
#   DATABASE_URL                       the same, for the test helpers' template database
#   MEMGATE_TEST_PATRONI_REPLICAS_URL  HAProxy's frontend to the replicas (GET /replica)
#   MEMGATE_TEST_PATRONI_REST          the nodes' REST base URLs, comma-separated (n1 first)
#   MEMGATE_TEST_PATRONI_CTL           this script, for `--ctl crash|start NODE`
#   MEMGATE_TEST_PATRONI_DIR           the cluster's directory: NODE/data, NODE/patroni.yml,
#                                      NODE/patroni.log, etcd/, haproxy.cfg
# Everything is stopped and deleted however CMD ends; the script exits with CMD's status.
#
# Installs Debian's patroni, etcd-server and haproxy when missing (apt-get, root), and PostgreSQL
# 15 + pgvector through scripts/ci-native-postgres.sh install. etcd and Patroni run as the
# postgres user when started as root. Tuned for failing over fast on loopback: Patroni ttl 10 s,
# loop_wait 1 s, retry_timeout 4 s; HAProxy checks every 500 ms, down after 2 failures, up after
# 1, and cuts the sessions of a server it marks down. Durability is off as in
# ci-native-postgres.sh (fsync) except what replication needs: synchronous_commit = on
# (synchronous_mode) and full_page_writes = on (pg_rewind of a former primary).
#
# Environment (optional): MEMGATE_PATRONI_PORT, the first port to try (default 56400; the
# cluster takes 8 free ports from there); NATIVE_PG_USER, NATIVE_PG_PASSWORD, NATIVE_PG_DB as
# for ci-native-postgres.sh.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=ci-native-postgres.sh
source "$(dirname "$0")/ci-native-postgres.sh"
# shellcheck disable=SC2034 # read by log() in ci-native-postgres.sh
LOG_TAG=patroni

SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
PATRONI_PORT_START="${MEMGATE_PATRONI_PORT:-56400}"
NODES=(n1 n2)
# Passwords of the cluster's own roles; throwaway, like the cluster.
SUPERUSER_PASSWORD=postgres-test
REPLICATION_PASSWORD=replicator-test

ensure_cluster_tools() {
  local missing=()
  command -v patroni >/dev/null || missing+=(patroni)
  command -v etcd >/dev/null || missing+=(etcd-server)
  command -v haproxy >/dev/null || missing+=(haproxy)
  ((${#missing[@]} == 0)) && return
  [[ $EUID -eq 0 ]] || die "missing ${missing[*]}; installing needs root"
  log "installing ${missing[*]}"
  apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { apt_get update -qq && apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
}

# Runs a command as postgres when root (PostgreSQL refuses root; etcd and Patroni run with it),
# replacing the process (no wrapper in between), so that $! is the command's own pid.
as_postgres_exec() {
  if [[ $EUID -eq 0 ]]; then
    exec setpriv --reuid=postgres --regid=postgres --init-groups env HOME="$CLUSTER_DIR" "$@"
  fi
  exec env HOME="$CLUSTER_DIR" "$@"
}

# Starts a daemon in the background, its output in LOG, its pid in PIDFILE. $1: pidfile, $2: log.
spawn() {
  local pidfile="$1" logfile="$2"
  shift 2
  # fd 8 (the port lock) stays with this script.
  (exec 8>&-; as_postgres_exec "$@") </dev/null >>"$logfile" 2>&1 &
  echo "$!" >"$pidfile"
  # Teardown kills it: no job notice for that.
  disown "$!"
}

# Whether the process in PIDFILE is alive and was started from this cluster's directory (a
# recycled pid of another program is left alone).
ours() {
  local pid
  pid="$(cat "$1" 2>/dev/null)" || return 1
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$CLUSTER_DIR"
}

kill_pidfile() {
  local pidfile="$1" signal="${2:-KILL}"
  if ours "$pidfile"; then kill -s "$signal" "$(cat "$pidfile")" 2>/dev/null || true; fi
}

# The postmaster of NODE, as PostgreSQL records it.
postmaster_pidfile() {
  local file="$CLUSTER_DIR/$1/data/postmaster.pid"
  [[ -f "$file" ]] || return 1
  head -1 "$file" >"$CLUSTER_DIR/$1/postmaster.pid.copy"
  echo "$CLUSTER_DIR/$1/postmaster.pid.copy"
}

# Stops everything of the cluster in CLUSTER_DIR and deletes it. Safe to call twice.
teardown() {
  [[ -n "${CLUSTER_DIR:-}" && -d "$CLUSTER_DIR" ]] || return 0
  local status="${1:-0}" node file
  # What the cluster did, when it failed to start or CMD failed.
  if [[ "${RUNNING:-}" == starting || "$status" != 0 ]]; then
    for file in "$CLUSTER_DIR"/etcd.log "$CLUSTER_DIR"/*/patroni.log "$CLUSTER_DIR"/haproxy.log; do
      if [[ -f "$file" ]]; then
        log "--- $file (last 40 lines)"
        tail -n 40 "$file" >&2
      fi
    done
  fi
  kill_pidfile "$CLUSTER_DIR/haproxy.pid"
  for node in "${NODES[@]}"; do kill_pidfile "$CLUSTER_DIR/$node/patroni.pid"; done
  for node in "${NODES[@]}"; do
    if [[ -f "$CLUSTER_DIR/$node/data/postmaster.pid" ]]; then
      as_owner "$PG_BIN/pg_ctl" -D "$CLUSTER_DIR/$node/data" -m immediate -w -t 10 stop >/dev/null 2>&1 || true
    fi
    if file="$(postmaster_pidfile "$node")"; then kill_pidfile "$file"; fi
  done
  kill_pidfile "$CLUSTER_DIR/etcd.pid"
  # A process killed a moment ago may still be writing its last file.
  rm -rf "$CLUSTER_DIR" 2>/dev/null || { sleep 1; rm -rf "$CLUSTER_DIR"; }
  log "stopped and removed the cluster in $CLUSTER_DIR"
}

# Whether pid $1 runs (a zombie nobody reaped yet does not).
alive() {
  local state
  kill -0 "$1" 2>/dev/null || return 1
  state="$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)"
  [[ "$state" != Z ]]
}

# The cluster of a run that was killed (its owner pid is gone) is cleaned up before starting.
reap_stale_clusters() {
  local dir owner
  for dir in "$STATE_DIR"/memgate-patroni.*; do
    [[ -f "$dir/owner" ]] || continue
    owner="$(cat "$dir/owner")"
    if [[ -z "$owner" ]] || ! alive "$owner"; then
      log "cleaning up the cluster of a finished run in $dir"
      (CLUSTER_DIR="$dir" teardown 0)
    fi
  done
}

# Sets PORTS to COUNT free loopback ports from PATRONI_PORT_START on.
take_ports() {
  local count="$1" port="$PATRONI_PORT_START"
  PORTS=()
  while ((${#PORTS[@]} < count)); do
    ((port < PATRONI_PORT_START + 100)) || die "no $count free ports in $PATRONI_PORT_START..$((PATRONI_PORT_START + 99))"
    port_busy "$port" || PORTS+=("$port")
    port=$((port + 1))
  done
}

# Polls COMMAND until it succeeds, for at most SECONDS; fails with WHAT. $1: seconds, $2: what.
wait_for() {
  local seconds="$1" what="$2" deadline
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "timed out after ${seconds} s waiting for $what"
    sleep 0.2
  done
}

http_ok() { curl -fsS -o /dev/null --max-time 2 "$1"; }

start_etcd() {
  local client="$1" peer="$2"
  spawn "$CLUSTER_DIR/etcd.pid" "$CLUSTER_DIR/etcd.log" etcd --name etcd1 --data-dir "$CLUSTER_DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "etcd1=http://127.0.0.1:$peer" --initial-cluster-state new \
    --heartbeat-interval 100 --election-timeout 500
  wait_for 30 "etcd on 127.0.0.1:$client" http_ok "http://127.0.0.1:$client/health"
}

# Patroni's configuration of NODE: $1 node, $2 PostgreSQL port, $3 REST port, $4 etcd port.
patroni_config() {
  local node="$1" pg="$2" rest="$3" etcd="$4"
  cat <<EOF
scope: memgate-test
namespace: /memgate-test-$$/
name: $node
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  hosts: 127.0.0.1:$etcd
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    primary_start_timeout: 0
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: logical
        hot_standby: 'on'
        max_connections: 200
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        fsync: 'off'
        synchronous_commit: 'on'
        full_page_writes: 'on'
        shared_buffers: 128MB
        maintenance_work_mem: 256MB
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - auth-local: trust
    - auth-host: scram-sha-256
  pg_hba:
    - local all all trust
    - local replication all trust
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
postgresql:
  listen: 127.0.0.1:$pg
  connect_address: 127.0.0.1:$pg
  data_dir: $CLUSTER_DIR/$node/data
  bin_dir: $PG_BIN
  pgpass: $CLUSTER_DIR/$node/pgpass
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    superuser:
      username: postgres
      password: $SUPERUSER_PASSWORD
    replication:
      username: replicator
      password: $REPLICATION_PASSWORD
    rewind:
      username: postgres
      password: $SUPERUSER_PASSWORD
  parameters:
    unix_socket_directories: $CLUSTER_DIR/$node
EOF
}

start_node() {
  local node="$1"
  spawn "$CLUSTER_DIR/$node/patroni.pid" "$CLUSTER_DIR/$node/patroni.log" patroni "$CLUSTER_DIR/$node/patroni.yml"
}

# HAProxy: $1 primary frontend port, $2 replicas frontend port, then per node "pg:rest".
haproxy_config() {
  local primary="$1" replicas="$2" spec ports name port path i
  shift 2
  cat <<EOF
global
  maxconn 400
defaults
  mode tcp
  retries 2
  timeout connect 1s
  timeout client 30m
  timeout server 30m
  timeout check 1s
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
EOF
  for spec in "primary $primary /primary" "replicas $replicas /replica"; do
    read -r name port path <<<"$spec"
    printf 'listen %s\n  bind 127.0.0.1:%s\n  option httpchk GET %s\n  http-check expect status 200\n' \
      "$name" "$port" "$path"
    i=0
    for ports in "$@"; do
      printf '  server %s 127.0.0.1:%s check port %s\n' "${NODES[i]}" "${ports%%:*}" "${ports##*:}"
      i=$((i + 1))
    done
  done
}

rest_url_of() { cat "$CLUSTER_DIR/$1/rest-url"; }

leader_node() {
  local node
  for node in "${NODES[@]}"; do
    if http_ok "$(rest_url_of "$node")/primary"; then echo "$node"; return 0; fi
  done
  return 1
}

psql_through() { PGPASSWORD="$PG_PASSWORD" "$PG_BIN/psql" -X -q -At "$1" -c "$2"; }

cmd_ctl() {
  CLUSTER_DIR="${MEMGATE_TEST_PATRONI_DIR:?--ctl needs MEMGATE_TEST_PATRONI_DIR (set for the command with-patroni.sh runs)}"
  local action="${1:-}" node="${2:-}" file
  if [[ "$node" == leader ]]; then node="$(leader_node)" || die "no node answers GET /primary"; fi
  [[ " ${NODES[*]} " == *" $node "* ]] || die "usage: $0 --ctl crash|start n1|n2|leader"
  case "$action" in
    crash)
      file="$(postmaster_pidfile "$node")" || die "$node has no running PostgreSQL"
      kill_pidfile "$CLUSTER_DIR/$node/patroni.pid"
      kill_pidfile "$file"
      log "crashed $node (kill -9 of its Patroni and postmaster)"
      echo "$node"
      ;;
    start)
      ours "$CLUSTER_DIR/$node/patroni.pid" && die "$node's Patroni is running"
      start_node "$node"
      log "started $node's Patroni"
      echo "$node"
      ;;
    *) die "usage: $0 --ctl crash|start n1|n2|leader" ;;
  esac
}

main() {
  [[ $# -gt 0 ]] || { sed -n '2,32p' "$0" >&2; exit 2; }
  local started=$SECONDS node i
  ensure_cluster_tools
  ensure_postgres
  reap_stale_clusters

  RUNNING=starting
  CLUSTER_DIR="$(mktemp -d "$STATE_DIR/memgate-patroni.XXXXXX")"
  echo "$$" >"$CLUSTER_DIR/owner"
  trap 'teardown "$?"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  chmod 755 "$CLUSTER_DIR"

  # etcd client and peer, HAProxy primary and replicas, then PostgreSQL and REST per node;
  # held under a lock until all are bound, so that two runs at once take different ones.
  exec 8>"$STATE_DIR/memgate-patroni-ports.lock"
  flock 8
  take_ports 8
  local etcd_client="${PORTS[0]}" etcd_peer="${PORTS[1]}" ha_primary="${PORTS[2]}" ha_replicas="${PORTS[3]}"
  local specs=() rest=()
  for i in "${!NODES[@]}"; do
    node="${NODES[i]}"
    mkdir -p "$CLUSTER_DIR/$node"
    patroni_config "$node" "${PORTS[4 + 2 * i]}" "${PORTS[5 + 2 * i]}" "$etcd_client" >"$CLUSTER_DIR/$node/patroni.yml"
    specs+=("${PORTS[4 + 2 * i]}:${PORTS[5 + 2 * i]}")
    rest+=("http://127.0.0.1:${PORTS[5 + 2 * i]}")
    echo "${rest[i]}" >"$CLUSTER_DIR/$node/rest-url"
  done
  if [[ $EUID -eq 0 ]]; then chown -R postgres: "$CLUSTER_DIR"; fi

  start_etcd "$etcd_client" "$etcd_peer"
  log "etcd 127.0.0.1:$etcd_client up at $((SECONDS - started)) s"

  # n1 bootstraps the cluster; n2 starts once n1 leads, and clones it.
  start_node n1
  wait_for 90 "n1 to lead" http_ok "${rest[0]}/primary"
  start_node n2
  wait_for 90 "n2 to stream synchronously from n1" http_ok "${rest[1]}/sync"
  log "n1 leads, n2 is its synchronous replica at $((SECONDS - started)) s"

  haproxy_config "$ha_primary" "$ha_replicas" "${specs[@]}" >"$CLUSTER_DIR/haproxy.cfg"
  haproxy -c -q -f "$CLUSTER_DIR/haproxy.cfg"
  haproxy -db -f "$CLUSTER_DIR/haproxy.cfg" </dev/null >"$CLUSTER_DIR/haproxy.log" 2>&1 8>&- &
  echo "$!" >"$CLUSTER_DIR/haproxy.pid"
  disown "$!"

  wait_for 10 "HAProxy to listen" port_busy "$ha_primary"
  exec 8>&-

  set_psql "$CLUSTER_DIR/n1" "${specs[0]%%:*}"
  create_memgate_role "${PSQL[@]}"

  MEMGATE_TEST_PATRONI_URL="$(memgate_url "$ha_primary")"
  MEMGATE_TEST_PATRONI_REPLICAS_URL="$(memgate_url "$ha_replicas")"
  wait_for 30 "HAProxy to reach the primary" psql_through "$MEMGATE_TEST_PATRONI_URL" \
    'SELECT 1 WHERE NOT pg_is_in_recovery()'
  wait_for 30 "HAProxy to reach the replica" psql_through "$MEMGATE_TEST_PATRONI_REPLICAS_URL" \
    "DO \$\$ BEGIN IF NOT pg_is_in_recovery() THEN RAISE 'not a replica'; END IF; END \$\$"

  export MEMGATE_TEST_PATRONI_URL MEMGATE_TEST_PATRONI_REPLICAS_URL
  export DATABASE_URL="$MEMGATE_TEST_PATRONI_URL"
  export MEMGATE_TEST_PATRONI_REST
  MEMGATE_TEST_PATRONI_REST="$(IFS=,; echo "${rest[*]}")"
  export MEMGATE_TEST_PATRONI_CTL="$SELF"
  export MEMGATE_TEST_PATRONI_DIR="$CLUSTER_DIR"
  patronictl -c "$CLUSTER_DIR/n1/patroni.yml" list >&2 || true
  log "up in $((SECONDS - started)) s"
  log "MEMGATE_TEST_PATRONI_URL=$MEMGATE_TEST_PATRONI_URL (also DATABASE_URL)"
  log "MEMGATE_TEST_PATRONI_REPLICAS_URL=$MEMGATE_TEST_PATRONI_REPLICAS_URL"
  log "MEMGATE_TEST_PATRONI_REST=$MEMGATE_TEST_PATRONI_REST"
  log "MEMGATE_TEST_PATRONI_DIR=$CLUSTER_DIR"
  log "running: $*"
  RUNNING=cmd
  local status=0
  "$@" || status=$?
  exit "$status"
}

if [[ "${1:-}" == --ctl ]]; then
  shift
  cmd_ctl "$@"
else
  main "$@"
fi
