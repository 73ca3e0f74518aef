#!/bin/bash
# CTest `report.render` (label unit): the bench HTML report renders in headless Chromium. A
# simulated suite's page is screenshot to ARTEFACTS/bench.png (kept for people to look at), and the
# picture must show the banner's red box, the correct bars' blue and the ceiling ticks' green.
# Exits 77 (CTest: skipped) when Chromium is absent: `UCUTLASS_CHROMIUM=1 scripts/setup` installs it,
# and CI (.ci/run) does.
# Usage: render_check.sh UCUTLASS_BINARY ARTEFACTS
set -u
bin=$1
art=$2
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chrome" ]; then
  echo "SKIP: Chromium is not installed (UCUTLASS_CHROMIUM=1 scripts/setup installs it)"
  exit 77
fi
rm -rf "$art" && mkdir -p "$art"
"$bin" bench synthetic --problems 6 --budget 8 --no-memory --out "$art/suite" > /dev/null || { echo "FAIL: bench"; exit 1; }
cp "$art/suite/simulated-bench.html" "$art/bench.html"
# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
timeout 120 "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,2600 \
  --screenshot="$art/bench.png" "file://$art/bench.html" > "$art/chromium.log" 2>&1
test -s "$art/bench.png" || { echo "FAIL: no screenshot"; cat "$art/chromium.log"; exit 1; }
counts=$(python3 "$(dirname "$0")/png_colours.py" "$art/bench.png" fde8e8 1f77b4 2ca02c) || exit 1
echo "$counts"
echo "screenshot: $art/bench.png"
status=0
while read -r colour n; do
  case $colour in
    fde8e8) min=20000 ;;  # the banner's background
    1f77b4) min=20000 ;;  # six blue bars in two charts
    2ca02c) min=200 ;;    # twelve ceiling ticks, 2 px high
    *) continue ;;
  esac
  [ "$n" -ge "$min" ] || { echo "FAIL: colour #$colour covers $n pixels, fewer than $min"; status=1; }
done <<< "$counts"
exit $status
