#!/bin/sh
# Patroni runs this once, on the node that creates the cluster, with a connection string to it
# as $1: the role and database memgate uses, and the extensions its migrations need (pgvector
# is not a trusted extension, so a superuser creates it; the gateway's own CREATE EXTENSION IF
# NOT EXISTS then finds it). Replicas clone all of it.
set -eu
/usr/lib/postgresql/15/bin/psql -X -q -v ON_ERROR_STOP=1 -d "$1" -v pw="$MEMGATE_DB_PASSWORD" <<'SQL'
CREATE ROLE memgate LOGIN PASSWORD :'pw';
CREATE DATABASE memgate OWNER memgate;
\connect memgate
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
SQL
