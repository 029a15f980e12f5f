#!/usr/bin/env bash
# Start a throwaway PostgreSQL server for the store tests and print its URL.
#
# Usage: URL=$(tests/store/start_postgres.sh)      # stop: tests/store/stop_postgres.sh "$URL"
# The cluster lives in a fresh temporary directory, listens on 127.0.0.1 on a free port, keeps
# its unix socket in that directory and trusts local connections. Durability is switched off:
# the data is thrown away. As root the server runs as the `postgres` user (PG_USER to change).
set -euo pipefail

pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
database=${PG_DATABASE:-evals_test}
base=$(mktemp -d "${TMPDIR:-/tmp}/evals-pg.XXXXXX")
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

as_server_user() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "${PG_USER:-postgres}" -- "$@"
  else
    "$@"
  fi
}

if [ "$(id -u)" -eq 0 ]; then
  chown "${PG_USER:-postgres}" "$base"
fi
as_server_user "$pg_bin/initdb" -D "$base/data" -U evals --auth=trust -E UTF8 --no-sync >"$base/initdb.log" 2>&1
as_server_user "$pg_bin/pg_ctl" -D "$base/data" -l "$base/server.log" -w -s \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $base -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
  start
as_server_user "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U evals "$database"
echo "postgresql://evals@127.0.0.1:$port/$database"
