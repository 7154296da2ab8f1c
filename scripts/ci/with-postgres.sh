#!/usr/bin/env bash
# Run a command with a throwaway PostgreSQL cluster on a loopback port, exported to it as
# TEST_DATABASE_URL (the store tests then run on PostgreSQL as well as SQLite). Installs
# Debian's postgresql when no server binaries are found. Usage: with-postgres.sh <command...>
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "with-postgres: installing Debian's postgresql"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) || true
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
fi
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
  echo "with-postgres: no PostgreSQL server could be installed; the store tests run on SQLite only" >&2
  exec "$@"
fi

# PostgreSQL refuses to run as root: run the cluster as the postgres user (or nobody).
run_as=()
if [ "$(id -u)" = "0" ]; then
  user=postgres
  id "$user" >/dev/null 2>&1 || user=nobody
  run_as=(runuser -u "$user" --)
fi

dir=$(mktemp -d /tmp/x402-pg-XXXXXX)
chmod 0777 "$dir"
port=$(( 20000 + RANDOM % 20000 ))
"${run_as[@]}" "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >/dev/null
"${run_as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c max_connections=200" start >/dev/null
cleanup() {
  "${run_as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
echo "with-postgres: throwaway PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
"$@"
