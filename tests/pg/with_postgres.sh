#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server: the PostgreSQL store's tests
# (src/memory/store_pg_test.cpp, CTest memory.postgres) need a real server, and this one is made
# from Debian's postgresql package in a temporary folder, so no system cluster is touched:
#   initdb (trust auth, superuser "ucutlass"), pg_ctl start on a unix socket in that folder and a free
#   TCP port on 127.0.0.1, createdb ucutlass_test; then
#   UCUTLASS_TEST_PG=postgresql://ucutlass@127.0.0.1:PORT/ucutlass_test "$@"; then stop and remove.
# As root the server runs as the `postgres` system user (PostgreSQL refuses to run as root).
# Exit status: the command's; 77 (skipped) when the server binaries are not installed.
# Usage: tests/pg/with_postgres.sh COMMAND [ARGS...]
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

initdb="$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1 || true)"
if [ -z "$initdb" ]; then
  echo "with_postgres.sh: skipped: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb);" \
       "install the Debian package postgresql (scripts/setup does)" >&2
  exit 77
fi
bin="$(dirname "$initdb")"

as_server=()
if [ "$(id -u)" = 0 ]; then
  if ! id postgres >/dev/null 2>&1; then
    echo "with_postgres.sh: skipped: running as root and there is no 'postgres' user to run the server as" \
         "(the Debian package postgresql creates it)" >&2
    exit 77
  fi
  as_server=(runuser -u postgres --)
fi

# A short path: the unix socket's full name must fit in 107 bytes. As root, under /tmp: the server's
# user must reach the folder, and $TMPDIR may sit in a home it cannot enter.
parent="${TMPDIR:-/tmp}"
if [ ${#as_server[@]} -gt 0 ]; then parent=/tmp; fi
tmp="$(mktemp -d "$parent/ucut-pg.XXXXXX")"
data="$tmp/data"
cleanup() {
  if [ -f "$data/postmaster.pid" ]; then
    "${as_server[@]}" "$bin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ ${#as_server[@]} -gt 0 ]; then chown postgres "$tmp"; fi
chmod 700 "$tmp"

# A free TCP port: ask the kernel for one, else try random ones until nothing answers.
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
        2>/dev/null || true)"
if [ -z "$port" ]; then
  for _ in $(seq 50); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  done
fi

if ! "${as_server[@]}" "$initdb" -D "$data" -U ucutlass --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 \
      >"$tmp/initdb.log" 2>&1; then
  echo "with_postgres.sh: initdb failed:" >&2
  cat "$tmp/initdb.log" >&2
  exit 1
fi
# fsync off: a throwaway server's data need not survive a crash, and the tests run faster.
if ! "${as_server[@]}" "$bin/pg_ctl" -D "$data" -l "$tmp/server.log" -w -t 60 \
      -o "-k $tmp -p $port -c listen_addresses=127.0.0.1 -F" start >/dev/null; then
  echo "with_postgres.sh: the PostgreSQL server did not start:" >&2
  cat "$tmp/server.log" >&2 || true
  exit 1
fi
"$bin/createdb" -h 127.0.0.1 -p "$port" -U ucutlass ucutlass_test

export UCUTLASS_TEST_PG="postgresql://ucutlass@127.0.0.1:$port/ucutlass_test"
echo "with_postgres.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') at $UCUTLASS_TEST_PG" >&2
status=0
"$@" || status=$?
exit "$status"
