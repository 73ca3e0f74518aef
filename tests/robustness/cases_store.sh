# Robustness cases sourced by run.sh (core set): the result store, PostgreSQL and Ray (docs/memory.md, docs/scale-out.md).
# One rule for the exit codes (docs/cli.md): a missing required option is usage (2), a server that
# refuses, never answers or is not what was named is the environment (3), and a named store or
# database that does not exist is usage (2), for every executor and store alike.

# expect_hidden RC TEXT SECRET -- command...: as expect, and SECRET nowhere in the output.
expect_hidden() {
  local want="$1" text="$2" secret="$3"
  shift 4
  local out rc why=""
  out="$("$@" 2>&1)"
  rc=$?
  n=$((n + 1))
  [ "$rc" = "$want" ] || why="exit $rc, want $want"
  grep -qF -- "$text" <<<"$out" || why="${why:+$why; }no '$text' in the output"
  ! grep -qF -- "$secret" <<<"$out" || why="${why:+$why; }the password '$secret' is in the output"
  [ "$(store_hash)" = "$before" ] || why="${why:+$why; }the store changed"
  if [ -n "$why" ]; then
    echo "FAIL: $* -> $why; output:"
    sed 's/^/    /' <<<"$out"
    fail=1
  else
    echo "ok: $* (no password shown)"
  fi
}

# A port that accepts connections and never answers (nobody accepts on it: the kernel completes
# the handshake): what a firewall's tarpit, a hung server or the wrong port looks like.
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(64)
print(s.getsockname()[1], flush=True); time.sleep(900)' > "$work/silent.port" &
silent_pid=$!
for _ in $(seq 100); do [ -s "$work/silent.port" ] && break; sleep 0.1; done
silent="127.0.0.1:$(cat "$work/silent.port")"
# nvcc as far as `nvcc --version` goes: --executor ray reaches Ray only where kernels would compile.
printf '#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.88 (stand-in)"\n' > "$work/nvcc"
chmod +x "$work/nvcc"
ray_bench=("$bin" bench "$root/problems" --match act_relu --no-memory --out "$work/ray")

# The help says what --db and --ray-address take.
expect 0 "postgresql://user@host[:port]/database or libpq's key=value form" -- "$bin" --help-all
expect 0 "local (a throwaway Ray started on this machine for the run)" -- "$bin" bench --help

# Ray: a missing address is the command line's (2) for both executors; an address that refuses,
# or a port that is not a Ray head, is the environment's (3) for both, within seconds.
expect 2 "--executor ray needs the cluster's address" -- env -u RAY_ADDRESS UCUTLASS_NVCC="$work/nvcc" \
  "${ray_bench[@]}" --plan --executor ray
expect 2 "--executor ray needs the cluster's address" -- env -u RAY_ADDRESS \
  "$bin" optimize "$root/problems/act_relu.py" --no-compile --no-memory --executor ray --out "$work/ray"
expect 2 "--eval-executor ray needs the cluster's address" -- env -u RAY_ADDRESS \
  "$bin" optimize "$root/problems/act_relu.py" --eval-executor ray --no-memory --out "$work/ray"
expect 3 "--executor ray: cannot connect to the Ray cluster at 127.0.0.1:1: [Errno 111] Connection refused" -- \
  env UCUTLASS_NVCC="$work/nvcc" "${ray_bench[@]}" --plan --executor ray --ray-address 127.0.0.1:1
expect 3 "--eval-executor ray: ray_eval: cannot connect to the Ray cluster at 127.0.0.1:1" -- \
  "${ray_bench[@]}" --eval-executor ray --ray-address 127.0.0.1:1
expect 3 "$silent accepted the connection but did not answer as a Ray head (a gRPC server) does within 5 s" -- \
  env UCUTLASS_NVCC="$work/nvcc" "${ray_bench[@]}" --plan --executor ray --ray-address "$silent"
expect 3 "$silent accepted the connection but did not answer as a Ray head" -- \
  "${ray_bench[@]}" --eval-executor ray --ray-address "$silent"

# PostgreSQL without a server: refused at once, or never answering (the 10 s connect timeout);
# the password, in each form libpq takes it, never shown.
expect_hidden 3 "postgresql://ann:***@127.0.0.1:1/ucut: cannot connect to the PostgreSQL store at 127.0.0.1:1" s3cret -- \
  "$bin" memory stats --db "postgresql://ann:s3cret@127.0.0.1:1/ucut"
expect_hidden 3 "postgresql://ann@127.0.0.1:1/ucut?sslmode=disable&password=***: cannot connect" s3cret -- \
  "$bin" memory stats --db "postgresql://ann@127.0.0.1:1/ucut?sslmode=disable&password=s3cret"
expect_hidden 3 "host=127.0.0.1 port=1 password=*** dbname=ucut: cannot connect" 's3 cr' -- \
  "$bin" memory stats --db "host=127.0.0.1 port=1 password='s3 cr' dbname=ucut"
[ ! -e "host=127.0.0.1 port=1 password='s3 cr' dbname=ucut" ] ||
  { echo "FAIL: a key=value connection string was taken for a SQLite file's name"; fail=1; }
expect_hidden 3 "the PostgreSQL server at $silent did not answer within 10 s" s3cret -- \
  "$bin" memory stats --db "postgresql://ann:s3cret@$silent/ucut"
expect 3 "hint: check the host and port" -- "$bin" optimize synthetic --budget 1 --out "$work/pg" \
  --db "postgresql://ann@$silent/ucut?connect_timeout=2"

# PostgreSQL with a throwaway server (tests/pg/with_postgres.sh), where this machine has one.
if ls /usr/lib/postgresql/*/bin/initdb > /dev/null 2>&1; then
  coproc PG { bash "$root/tests/pg/with_postgres.sh" bash -c 'echo "$UCUTLASS_TEST_PG"; exec cat > /dev/null' \
                2> "$work/pg.log"; }
  pg=""
  read -r -t 120 pg <&"${PG[0]}" || true
  if [ -z "$pg" ]; then
    echo "FAIL: the throwaway PostgreSQL server did not start:"
    sed 's/^/    /' "$work/pg.log"
    fail=1
  else
    pg_server="${pg%/*}"
    pg_port="${pg_server##*:}"
    # A database that does not exist: a named store that does not exist (2), as a missing file.
    expect 2 "the PostgreSQL server at 127.0.0.1:$pg_port has no database \"no_such_db\"" -- \
      "$bin" memory stats --db "$pg_server/no_such_db"
    expect 2 "has no database \"no_such_db\"" -- "$bin" memory import "$M/good.json" --db "$pg_server/no_such_db"
    # memory stats prints where the store is: the password as *** (trust authentication here, so
    # the server opens the store whatever the password says).
    expect 0 "imported 2 experiences" -- "$bin" memory import "$M/good.json" --db "$pg"
    expect_hidden 0 "store: $pg?password=***" s3cret -- "$bin" memory stats --db "$pg?password=s3cret"
    expect_hidden 0 "store: ${pg/ucutlass@/ucutlass:***@}" s3cret -- "$bin" memory stats --db "${pg/ucutlass@/ucutlass:s3cret@}"
    # A teammate's role without grants: told which one it lacks, on what, and the GRANTs (3).
    pg_bin="$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")"
    "$pg_bin/createuser" -h 127.0.0.1 -p "$pg_port" -U ucutlass ucut_mate
    expect 3 "permission denied for table ucutlass_schema_version (the role ucut_mate lacks SELECT on table ucutlass_schema_version)" -- \
      "$bin" memory stats --db "${pg/ucutlass@/ucut_mate@}"
    expect 3 "hint: ask the store's owner to grant a teammate's role what the tool uses: GRANT USAGE ON SCHEMA public TO ucut_mate;" -- \
      "$bin" memory list --db "${pg/ucutlass@/ucut_mate@}"
  fi
  eval "exec ${PG[1]}>&-"
  wait "$PG_PID" 2> /dev/null
else
  echo "skipped: the PostgreSQL cases with a server (no /usr/lib/postgresql/*/bin/initdb; scripts/setup installs it)"
fi
kill "$silent_pid" 2> /dev/null
wait "$silent_pid" 2> /dev/null

# The kernel zoo (ucutlass warmup, docs/kernel-abi.md): usage errors, a missing or foreign archive,
# an empty store to export; the dry run counts without building.
expect 2 "--tier: v9 not in {v1,full}" -- "$bin" warmup --tier v9 --dry-run
expect 0 "stored units" -- "$bin" warmup --dry-run --top 1
expect 0 "ranked for h100-sxm, h200" -- "$bin" warmup --dry-run --top 1 --gpu 'h100, h200'
# --list prints the units and builds nothing (it went on to compile the whole zoo)
expect 0 "f32x3_nn_acc" -- "$bin" warmup --list --top 1
if [ -n "$(ls "$UCUTLASS_CACHE"/kernels/stage/*.o "$UCUTLASS_CACHE"/kernels/stage/*.building.* 2> /dev/null)" ]; then
  echo "FAIL: warmup --list compiled units"
  fail=1
fi
expect 2 "h999" -- "$bin" warmup --dry-run --gpu h100,h999
expect 2 "--gpu names no GPU" -- "$bin" warmup --dry-run --gpu ,
expect 2 "$work/none.tar.xz: no such archive" -- "$bin" warmup --import "$work/none.tar.xz"
printf 'not an archive' > "$work/zoo-bad.tar.xz"
expect 1 "not a readable .tar.xz archive" -- "$bin" warmup --import "$work/zoo-bad.tar.xz"
mkdir -p "$work/zoo-foreign" && printf '{"ucutlass_zoo": 1, "toolchain": "nvcc 0.0, CUTLASS 0.0", "units": []}' > "$work/zoo-foreign/manifest.json"
tar cJf "$work/zoo-foreign.tar.xz" -C "$work/zoo-foreign" manifest.json
expect 1 "built with nvcc 0.0, CUTLASS 0.0; this machine has" -- "$bin" warmup --import "$work/zoo-foreign.tar.xz"
expect 2 "holds no pinned units" -- "$bin" warmup --export "$work/zoo-out.tar.xz"
expect 2 "--export and --import are two commands" -- "$bin" warmup --export a.tar.xz --import b.tar.xz
# An export and an import round trip (two caches, the same toolchain): the unit arrives pinned.
mkdir -p "$work/zoo-a/kernels/stage" && printf 'object' > "$work/zoo-a/kernels/stage/abc123.o" && : > "$work/zoo-a/kernels/stage/abc123.pin"
expect 0 "exported 1 pinned stored units" -- env UCUTLASS_CACHE="$work/zoo-a" "$bin" warmup --export "$work/zoo.tar.xz"
expect 0 "imported 1 stored units (0 were already there), pinned" -- env UCUTLASS_CACHE="$work/zoo-b" "$bin" warmup --import "$work/zoo.tar.xz"
{ [ -f "$work/zoo-b/kernels/stage/abc123.o" ] && [ -f "$work/zoo-b/kernels/stage/abc123.pin" ]; } ||
  { echo "FAIL: the imported unit is not in the second store, pinned"; fail=1; }
expect 0 "1 pinned" -- env UCUTLASS_CACHE="$work/zoo-b" "$bin" cache
expect 2 "$work/no-suite: no such suite folder or problem file" -- "$bin" warmup --suite "$work/no-suite" --dry-run
expect 2 "no problem .py files found in $root/problems matching 'zzz*'" -- "$bin" warmup --suite "$root/problems" --match 'zzz*' --dry-run
