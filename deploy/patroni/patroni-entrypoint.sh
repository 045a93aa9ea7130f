#!/bin/sh
# Starts Patroni with /etc/patroni/patroni.yml and the PATRONI_* variables. PATRONI_NAME is the
# node's name and also the host name the other containers reach it by (its compose service):
# its REST API and PostgreSQL are announced at PATRONI_NAME:8008 and PATRONI_NAME:5432 unless
# PATRONI_RESTAPI_CONNECT_ADDRESS / PATRONI_POSTGRESQL_CONNECT_ADDRESS say otherwise.
set -eu
: "${PATRONI_NAME:?set PATRONI_NAME to this node's name (its host name on the network)}"
: "${PATRONI_SUPERUSER_PASSWORD:?set PATRONI_SUPERUSER_PASSWORD}"
: "${PATRONI_REPLICATION_PASSWORD:?set PATRONI_REPLICATION_PASSWORD}"
: "${MEMGATE_DB_PASSWORD:?set MEMGATE_DB_PASSWORD (the memgate role is created with it)}"
export PATRONI_REWIND_PASSWORD="${PATRONI_REWIND_PASSWORD:-$PATRONI_SUPERUSER_PASSWORD}"
export PATRONI_RESTAPI_CONNECT_ADDRESS="${PATRONI_RESTAPI_CONNECT_ADDRESS:-$PATRONI_NAME:8008}"
export PATRONI_POSTGRESQL_CONNECT_ADDRESS="${PATRONI_POSTGRESQL_CONNECT_ADDRESS:-$PATRONI_NAME:5432}"
exec patroni /etc/patroni/patroni.yml
