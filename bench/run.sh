#!/usr/bin/env bash
# Benchmarks of the run job with the reference agents over the built-in suite (issue 2):
#   1. throughput: episodes per second and harness time per episode (wall and CPU), 2 workers;
#   2. peak memory for ~100,000 episodes, with and without the streamed --json document.
# Usage: bench/run.sh [REPEAT]   (default 98: 64 cases × 16 (setting, target) pairs × 98 ≈ 100,000 episodes)
# Prints one line per measurement; copy the figures into BENCHMARKS.md with the date and machine. Runs are not
# recorded (--no-store): this measures the harness; bench/store.sh measures the store.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat="${1:-98}"
cargo build --release -q -p gauntlet-cli
bin=target/release/gauntlet
episodes=$("$bin" run -q --no-store --repeat 1 --settings benign,direct,indirect,multi | head -1 | sed -E 's/.*= ([0-9]+) episodes.*/\1/')
total=$((episodes * repeat))
measure() { # label, then gauntlet args; three runs: min / median / max of wall time per episode (this VM is noisy),
  # and the median run's CPU time and peak memory
  local label="$1"; shift
  local runs=() sorted med
  for _ in 1 2 3; do
    runs+=("$( { /usr/bin/time -f "%e %U %S %M" "$bin" "$@" >/dev/null; } 2>&1 | tail -1 )")
  done
  sorted=$(printf '%s\n' "${runs[@]}" | sort -n)
  med=$(sed -n 2p <<<"$sorted")
  read -r wall user sys rss <<<"$med"
  local wmin wmax
  wmin=$(sed -n 1p <<<"$sorted" | cut -d' ' -f1)
  wmax=$(sed -n 3p <<<"$sorted" | cut -d' ' -f1)
  awk -v l="$label" -v n="$total" -v w="$wall" -v a="$wmin" -v b="$wmax" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
    printf "%-28s episodes=%d wall=%.2fs episodes/s=%.0f wall/episode min/median/max=%.4f/%.4f/%.4fms cpu/episode=%.4fms peak_rss=%.1fMB\n",
      l, n, w, n / w, 1000 * a / n, 1000 * w / n, 1000 * b / n, 1000 * (u + s) / n, r / 1024 }'
}
"$bin" run -q --no-store --repeat 10 >/dev/null   # warm-up
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -m); date: $(date -u +%F)"
measure "run (2 workers)" run -q --no-store --repeat "$repeat" --concurrency 2
measure "run (1 worker)" run -q --no-store --repeat "$repeat" --concurrency 1
tmp=$(mktemp -d)
measure "run --json (2 workers)" run -q --no-store --repeat "$repeat" --concurrency 2 --json "$tmp/run.json"
echo "json size: $(du -m "$tmp/run.json" | cut -f1) MB"
rm -rf "$tmp"
