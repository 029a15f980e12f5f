#!/usr/bin/env bash
# Stop a server started by start_postgres.sh and delete its files.
#
# Usage: tests/store/stop_postgres.sh URL
set -euo pipefail

pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
port=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.urlsplit(sys.argv[1]).port)' "$1")
opts=$(grep -l -F -- "\"-p\" \"$port\"" "${TMPDIR:-/tmp}"/evals-pg.*/data/postmaster.opts | head -n 1)
base=$(dirname "$(dirname "$opts")")
if [ "$(id -u)" -eq 0 ]; then
  runuser -u "${PG_USER:-postgres}" -- "$pg_bin/pg_ctl" -D "$base/data" -m immediate -w -s stop
else
  "$pg_bin/pg_ctl" -D "$base/data" -m immediate -w -s stop
fi
rm -rf "$base"
