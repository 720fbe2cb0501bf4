#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the tests and benchmarks of the PostgreSQL thread
# store. Debian's postgresql-15 (scripts/install-ci-tools.sh installs it) provides the programs.
#
#   scripts/postgres-cluster.sh start   # prints the URL of its `postgres` database; idempotent
#   scripts/postgres-cluster.sh stop
#
# The cluster lives in $AGENTWIRE_PG_DIR (default /tmp/agentwire-test-postgres): initdb there,
# trust authentication for the role `agentwire` on 127.0.0.1 only, a free port. `initdb` and
# `postgres` refuse to run as root, so as root (CI) they run as the package's `postgres` user.
# Callers running at once (parallel test processes) take turns on a lock (which the server must
# not inherit: it would hold it for its lifetime); a cluster that is up
# already is reused, one whose server is gone is made again.
set -euo pipefail

BIN="${AGENTWIRE_PG_BIN:-/usr/lib/postgresql/15/bin}"
DIR="${AGENTWIRE_PG_DIR:-/tmp/agentwire-test-postgres}"
command="${1:-start}"

die() { echo "postgres-cluster: $*" >&2; exit 1; }
[ -x "$BIN/initdb" ] || die "$BIN/initdb is missing: run scripts/install-ci-tools.sh (it installs postgresql-15)"

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

exec 9>"$DIR.lock"
flock 9

url() { echo "postgres://agentwire@127.0.0.1:$(cat "$DIR/port")/postgres"; }

case "$command" in
  start)
    if [ -f "$DIR/port" ] && as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
      url
      exit 0
    fi
    rm -rf "$DIR"
    mkdir -p "$DIR"
    [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$DIR"
    as_owner "$BIN/initdb" -D "$DIR/data" -U agentwire --auth=trust -E UTF8 --locale=C.UTF-8 \
      >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; die "initdb failed"; }
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    if ! as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
      -o "-p $port -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null 9>&-; then
      cat "$DIR/server.log" >&2 || true
      die "the server did not start"
    fi
    echo "$port" >"$DIR/port"
    url
    ;;
  stop)
    if [ -d "$DIR/data" ]; then
      as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true
    fi
    ;;
  *)
    die "unknown command $command (start or stop)"
    ;;
esac
