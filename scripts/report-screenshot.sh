#!/usr/bin/env bash
# Regenerates docs/report.png: runs the main job (examples/length-ratio.yaml), writes its report and
# takes a full-page screenshot of it with headless Chromium (Debian: apt-get install chromium).
# Usage: scripts/report-screenshot.sh [OUT.png]   (default docs/report.png)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/report.png}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
bin/comlrl train examples/length-ratio.yaml --set output_dir="$work/length-ratio" --set report=false
bin/comlrl report "$work/length-ratio" --out "$work/report.html"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome)"
"$browser" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,2860 \
    --screenshot="$work/report.png" "file://$work/report.html" 2>/dev/null
cp "$work/report.png" "$out"
echo "wrote $out"
