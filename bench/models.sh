#!/usr/bin/env bash
# Benchmarks of model-backed runs against the mock server (issue 3):
#   1. throughput against the ideal C/(R·L) with the mock at L = 100 ms latency, for C = 16, 64, 256 episodes in
#      flight (R = model calls per episode, read from the ledger);
#   2. CPU time of the gauntlet process per model call with the mock at 0 ms latency.
# Usage: bench/models.sh [SETTING]   (default benign; `direct` gives multi-call episodes)
set -euo pipefail
cd "$(dirname "$0")/.."
setting="${1:-benign}"
port=18189
cargo build --release -q -p gauntlet-cli -p gauntlet-mock
bin=target/release/gauntlet
suite=crates/gauntlet-cli/tests/fixtures/mini
tmp=$(mktemp -d)
cfg="$tmp/gauntlet.yaml"
printf 'providers:\n  mock: {base_url: "http://127.0.0.1:%s/v1"}\n' "$port" > "$cfg"
mock_pid=""
start_mock() { # latency_ms
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null || true
  target/release/gauntlet-mock --port "$port" --latency-ms "$1" > "$tmp/mock.log" 2>&1 &
  mock_pid=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/stats" >/dev/null && return; sleep 0.1; done
  echo "mock did not start" >&2; exit 1
}
trap '[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "machine: $(nproc) cores; date: $(date -u +%F); setting: $setting"

start_mock 100
for c in 16 64 256; do
  reps=$(( c * 20 ))
  out=$( { /usr/bin/time -f "%e %U %S" "$bin" run --no-store --suite "$suite" --agent mock/literal --settings "$setting" --config "$cfg" \
      --repeat "$reps" --concurrency "$c" --model-concurrency "$c" 2>&1 >/dev/null; } 2>&1 )
  read -r wall user sys <<<"$(echo "$out" | tail -1)"
  requests=$(echo "$out" | sed -nE 's/^model mock\/literal \[target\]: ([0-9]+) requests.*/\1/p')
  awk -v c="$c" -v n="$reps" -v w="$wall" -v q="$requests" -v u="$user" -v s="$sys" 'BEGIN {
    r = q / n; ideal = c / (r * 0.1); got = n / w;
    printf "C=%-3d episodes=%d R=%.2f wall=%.2fs throughput=%.1f ep/s ideal=%.1f ep/s efficiency=%.1f%% cpu/call=%.3fms\n",
      c, n, r, w, got, ideal, 100 * got / ideal, 1000 * (u + s) / q }'
done

start_mock 0
reps=4000
out=$( { /usr/bin/time -f "%e %U %S" "$bin" run --no-store --suite "$suite" --agent mock/literal --settings "$setting" --config "$cfg" \
    --repeat "$reps" --concurrency 16 --model-concurrency 16 2>&1 >/dev/null; } 2>&1 )
read -r wall user sys <<<"$(echo "$out" | tail -1)"
requests=$(echo "$out" | sed -nE 's/^model mock\/literal \[target\]: ([0-9]+) requests.*/\1/p')
awk -v q="$requests" -v w="$wall" -v u="$user" -v s="$sys" 'BEGIN {
  printf "latency 0: %d calls in %.2fs, gauntlet CPU per model call = %.3f ms\n", q, w, 1000 * (u + s) / q }'
