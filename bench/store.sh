#!/usr/bin/env bash
# Benchmarks of the run store and the reports (issue 6), on a ~100,000-episode run of the built-in suite:
#   1. store throughput on its own: `cargo bench -p gauntlet-store` (real records, one writer thread);
#   2. the run end to end with and without the store (wall time, episodes/s, peak memory);
#   3. rendering the stored run: HTML (time, size), JSON, JUnit and Markdown (time), from the store.
# Usage: bench/store.sh [REPEAT]   (default 98: 64 cases × 16 (setting, target) pairs × 98 = 100,352 episodes)
set -euo pipefail
cd "$(dirname "$0")/.."
repeat="${1:-98}"
cargo build --release -q -p gauntlet-cli
bin=$PWD/target/release/gauntlet
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); date: $(date -u +%F)"
cargo bench -q -p gauntlet-store 2>/dev/null | grep -E '^(sample|write|read):'
t() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1; }
read -r w0 m0 <<<"$(t "$bin" run -q --repeat "$repeat" --concurrency 2 --no-store)"
read -r w1 m1 <<<"$(t "$bin" run -q --repeat "$repeat" --concurrency 2 --store "$tmp/g.db")"
n=$((1024 * repeat))
awk -v n="$n" -v w0="$w0" -v w1="$w1" -v m0="$m0" -v m1="$m1" 'BEGIN {
  printf "run, no store:   %d episodes in %.2f s = %.0f episodes/s, peak %.0f MB\n", n, w0, n / w0, m0 / 1024
  printf "run, store:      %d episodes in %.2f s = %.0f episodes/s, peak %.0f MB (store adds %.2f s)\n", n, w1, n / w1, m1 / 1024, w1 - w0 }'
echo "store size: $(du -m "$tmp/g.db" | cut -f1) MB"
id=$("$bin" runs list --json --store "$tmp/g.db" | head -1 | sed -E 's/.*"id":"([^"]+)".*/\1/')
for f in html json junit md; do
  read -r w m <<<"$(t "$bin" report "$id" --format "$f" --store "$tmp/g.db" -o "$tmp/report.$f")"
  printf "report --format %-5s %.2f s, peak %.0f MB, %.1f MB\n" "$f" "$w" "$(echo "$m / 1024" | bc -l)" \
    "$(echo "$(stat -c %s "$tmp/report.$f") / 1048576" | bc -l)"
done
