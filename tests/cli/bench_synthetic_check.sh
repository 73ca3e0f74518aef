#!/bin/bash
# CTest `bench.synthetic` (label unit): a suite on the synthetic model surface (issue 29 item 1)
# says SIMULATED in the first line it prints, in its report files' names and headings and in the
# HTML banner; labels its costs modelled beside the seconds the run took; learns into its own
# store, OUT/simulated-memory.db (or --db), never the user's memory ($UCUTLASS_STORE); and --help
# says what 'synthetic' is. `optimize synthetic` likewise.
# Usage: bench_synthetic_check.sh UCUTLASS_BINARY OUT_DIR
set -u
bin=$1
out=$2
rm -rf "$out" && mkdir -p "$out"
export UCUTLASS_STORE="$out/user-memory.db"  # the user's memory: must stay untouched
status=0
fail() { echo "FAIL: $*"; status=1; }
has() { grep -qE -- "$2" "$1" || fail "$1 lacks /$2/"; }
lacks() { ! grep -qE -- "$2" "$1" || fail "$1 holds /$2/"; }

"$bin" bench synthetic --problems 3 --budget 6 --out "$out/s" > "$out/stdout" || fail "bench synthetic failed"
cat "$out/stdout"
head -1 "$out/stdout" | grep -q '^SIMULATED (model surface, nothing ran): ' || fail "the first line is not the banner"
has "$out/stdout" '^geomean speedup over eager: [0-9.]+x \(fallbacks and failures count as 1.0x\), simulated$'
has "$out/stdout" '^cost: modelled, nothing compiled or ran \(wall [0-9]+ s, .*\); this run took [0-9.]+ s$'
lacks "$out/stdout" '^cost: wall'
s="$out/s"
for f in report.md report.json bench.html; do
  test -s "$s/simulated-$f" || fail "no $s/simulated-$f"
  test ! -e "$s/$f" || fail "$s/$f is named like a real run's"
done
has "$s/simulated-report.md" '^# ucutlass bench \(SIMULATED\)$'
has "$s/simulated-report.md" '^SIMULATED \(model surface, nothing ran\)'
has "$s/simulated-report.md" '^\| problem \| status \| × eager'
test "$(grep -c '^| synthetic_p' "$s/simulated-report.md")" -eq 3 || fail "not 3 problem rows"
has "$s/simulated-report.json" '"simulated": true'
has "$s/simulated-report.json" '"modelled": true'
has "$s/simulated-bench.html" '<p class="banner">SIMULATED \(model surface, nothing ran\)'
has "$s/simulated-bench.html" '<title>ucutlass bench: synthetic \(SIMULATED\)</title>'
has "$s/synthetic_p0/report.md" '^\*\*SIMULATED \(model surface, nothing ran\)\*\*'
has "$s/synthetic_p0/report.md" '^- cost \(modelled on the model.s clock; nothing compiled or ran\)'
test -s "$s/simulated-memory.db" || fail "the simulated run did not learn into OUT/simulated-memory.db"
test ! -e "$UCUTLASS_STORE" || fail "the simulated run wrote into the user's memory"

# --db names the store.
"$bin" bench synthetic --problems 2 --budget 4 --db "$out/named.db" --out "$out/d" > /dev/null || fail "--db run failed"
test -s "$out/named.db" || fail "--db was not used"
test ! -e "$out/d/simulated-memory.db" || fail "--db given, yet OUT/simulated-memory.db was written"

"$bin" bench --help > "$out/help" 2>&1
has "$out/help" "'synthetic': a SIMULATED suite on a model cost surface"

"$bin" optimize synthetic --budget 4 --out "$out/o" > "$out/o.stdout" 2> /dev/null || fail "optimize synthetic failed"
has "$out/o.stdout" '^SIMULATED \(model surface, nothing ran\): report: '
test -s "$out/o/simulated-memory.db" || fail "optimize synthetic did not learn into OUT/simulated-memory.db"
test ! -e "$UCUTLASS_STORE" || fail "optimize synthetic wrote into the user's memory"
exit $status
