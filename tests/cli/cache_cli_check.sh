#!/bin/bash
# CTest `cache_cli` (label unit): `ucutlass cache` on a fake cache folder reports every area and
# cleans down to a size, least recently used first; bad sizes are usage errors with a hint.
# Usage: cache_cli_check.sh UCUTLASS_BINARY
set -u
bin=$1
export UCUTLASS_CACHE=$(mktemp -d)
trap 'rm -rf "$UCUTLASS_CACHE"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
mkdir -p "$UCUTLASS_CACHE"/{kernels/obj,build/c1,baselines}
head -c 3000000 /dev/zero > "$UCUTLASS_CACHE/kernels/old.so"; touch -d '3 days ago' "$UCUTLASS_CACHE/kernels/old.so"
head -c 2000000 /dev/zero > "$UCUTLASS_CACHE/kernels/obj/u.o"; touch -d '2 days ago' "$UCUTLASS_CACHE/kernels/obj/u.o"
head -c 1000000 /dev/zero > "$UCUTLASS_CACHE/build/c1/lib.so"; touch -d '1 day ago' "$UCUTLASS_CACHE/build/c1"
echo '{}' > "$UCUTLASS_CACHE/baselines/p.json"; touch -d '9 days ago' "$UCUTLASS_CACHE/baselines/p.json"
out=$("$bin" cache) || fail "cache stats failed"
echo "$out"
for want in "libraries        1 entries" "objects          1 entries" "candidates       1 entries" \
            "baselines        1 files" "cap: 20.0 GB"; do
  grep -qF "$want" <<< "$out" || fail "stats lacks '$want'"
done
out=$("$bin" cache clean --max-size 1.5M) || fail "cache clean failed"
echo "$out"
grep -q "removed 2 entries (5 MB)" <<< "$out" || fail "clean did not remove the two oldest entries"
[ -f "$UCUTLASS_CACHE/build/c1/lib.so" ] || fail "the newest entry was removed"
[ -f "$UCUTLASS_CACHE/baselines/p.json" ] || fail "a baseline was removed"
"$bin" cache clean --max-size 3Q > /dev/null 2> "$UCUTLASS_CACHE/err"; rc=$?
[ $rc = 2 ] || fail "a bad size exits $rc, not 2"
grep -q "hint: write a number" "$UCUTLASS_CACHE/err" || fail "a bad size gives no hint"
out=$("$bin" cache clean --all) || fail "cache clean --all failed"
grep -q "removed 1 entry" <<< "$out" || fail "--all did not remove the last entry: $out"
[ -f "$UCUTLASS_CACHE/baselines/p.json" ] || fail "--all removed a baseline"
exit $status
