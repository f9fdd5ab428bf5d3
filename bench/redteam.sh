#!/usr/bin/env bash
# Red-team benchmark against the mock (issue 5): Bias + Toxicity, 210 cases (10 sub-types × 3 seeds × 7 attacks:
# none and six transforms), target (LLM agent) and judge both on gauntlet-mock.
#   1. throughput against the ideal C/(R·L) at L = 100 ms for C = 10, 50, 256 (R = model calls per case, from the ledger);
#   2. CPU of the gauntlet process per case at 0 ms latency.
# The model-driven prompt-injection attack and the simulator of the peer run are not built yet.
set -euo pipefail
cd "$(dirname "$0")/.."
port=18289
cargo build --release -q -p gauntlet-cli -p gauntlet-mock
bin=target/release/gauntlet
tmp=$(mktemp -d)
mock_pid=""
start_mock() {
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null || true
  target/release/gauntlet-mock --port "$port" --latency-ms "$1" > "$tmp/mock.log" 2>&1 &
  mock_pid=$!
  for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/stats" >/dev/null && return; sleep 0.1; done
  echo "mock did not start" >&2; exit 1
}
trap '[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
attacks=none,base64,rot13,leetspeak,homoglyph,json-embed,payload-split
run() { # latency concurrency
  printf 'providers:\n  mock: {base_url: "http://127.0.0.1:%s/v1"}\npool: {concurrency: %s}\n' "$port" "$2" > "$tmp/g.yaml"
  { /usr/bin/time -f "%e %U %S" "$bin" redteam --target mock/literal --judge mock/judge --vulns bias,toxicity \
      --attacks "$attacks" --config "$tmp/g.yaml" --concurrency "$2" 2>&1 >/dev/null; } 2>&1
}
echo "machine: $(nproc) cores; date: $(date -u +%F)"
start_mock 100
for c in 10 50 256; do
  out=$(run 100 "$c")
  read -r wall user sys <<<"$(echo "$out" | tail -1)"
  cases=$(echo "$out" | sed -nE 's/^([0-9]+) cases in.*/\1/p')
  reqs=$(echo "$out" | sed -nE 's/^model mock\/[a-z]+ \[[a-z]+\]: ([0-9]+) requests.*/\1/p' | paste -sd+ | bc)
  # Ideal: C/(R·L) in steady state; with N cases a run cannot beat ceil(N/C) waves of R·L, so both are shown.
  awk -v c="$c" -v n="$cases" -v w="$wall" -v q="$reqs" 'BEGIN { r = q / n; ideal = c / (r * 0.1); got = n / w;
    waves = int((n + c - 1) / c); wave_ideal = n / (waves * r * 0.1);
    printf "C=%-3d cases=%d R=%.2f wall=%.2fs throughput=%.1f cases/s ideal C/(R·L)=%.1f (%.1f%%) wave-bound ideal=%.1f (%.1f%%)\n",
      c, n, r, w, got, ideal, 100 * got / ideal, wave_ideal, 100 * got / wave_ideal }'
done
start_mock 0
out=$(run 0 16)
read -r wall user sys <<<"$(echo "$out" | tail -1)"
cases=$(echo "$out" | sed -nE 's/^([0-9]+) cases in.*/\1/p')
awk -v n="$cases" -v u="$user" -v s="$sys" 'BEGIN { printf "latency 0: gauntlet CPU per case (target + judge calls) = %.3f ms\n", 1000 * (u + s) / n }'
