#!/usr/bin/env bash
# First start: initdb as the official postgres image does (POSTGRES_USER is the superuser,
# POSTGRES_PASSWORD its password for TCP connections, POSTGRES_DB created), then run the
# command as the postgres user.
set -euo pipefail

if [[ "${1:-}" == -* ]]; then set -- postgres "$@"; fi

if [[ "${1:-}" == postgres && "$(id -u)" == 0 ]]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 0700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [[ "${1:-}" == postgres && ! -s "$PGDATA/PG_VERSION" ]]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
  user="${POSTGRES_USER:-postgres}"
  db="${POSTGRES_DB:-$user}"
  pwfile="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pwfile"
  printf "\nlisten_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  if [[ "$db" != postgres ]]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    psql -X -q -v ON_ERROR_STOP=1 -U "$user" -d postgres -v db="$db" <<<'CREATE DATABASE :"db";'
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
  echo "initialised $PGDATA (superuser $user, database $db)"
fi

exec "$@"
