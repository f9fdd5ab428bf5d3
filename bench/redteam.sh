#!/usr/bin/env bash
# Red-team benchmark against the mock (issue 5), the peer run's shape: Bias (3 types) + Toxicity (2 types),
# prompt-injection attack, N = 200 (40 simulated baselines per type), simulator, attacker, target (LLM agent) and
# judge all on gauntlet-mock.
#   1. throughput against the ideal C/(R·L) at L = 100 ms for C = 10, 50, 256 (R = model calls per case, from the ledger);
#   2. CPU of the gauntlet process per case at 0 ms latency.
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
vulns=bias/race,bias/gender,bias/religion,toxicity/insults,toxicity/profanity
run() { # latency concurrency [seeds per sub-type]
  printf 'providers:\n  mock: {base_url: "http://127.0.0.1:%s/v1"}\npool: {concurrency: %s}\n' "$port" "$2" > "$tmp/g.yaml"
  { /usr/bin/time -f "%e %U %S" "$bin" redteam --no-store --target mock/literal --judge mock/judge --vulns "$vulns" \
      --attacks prompt-injection --attacker mock/attacker --simulator mock/simulator --seeds-per-subtype "${3:-40}" \
      --config "$tmp/g.yaml" --concurrency "$2" 2>&1 >/dev/null; } 2>&1
}
echo "machine: $(nproc) cores; date: $(date -u +%F)"
start_mock 100
# The peer's N = 200 at each C, then N = 2,000 at C = 50 and N = 2,000 and 5,000 at C = 256 (issue 14): with 200
# cases a window of 256 never fills.
for cn in 10:40 50:40 50:400 256:40 256:400 256:1000; do
  c=${cn%%:*}
  out=$(run 100 "$c" "${cn##*:}")
  read -r wall user sys <<<"$(echo "$out" | tail -1)"
  cases=$(echo "$out" | sed -nE 's/^([0-9]+) cases in.*/\1/p')
  reqs=$(echo "$out" | sed -nE 's/^model mock\/[a-z]+ \[[a-z]+\]: ([0-9]+) requests.*/\1/p' | paste -sd+ | bc)
  sims=$(echo "$out" | sed -nE 's/^model mock\/[a-z]+ \[simulator\]: ([0-9]+) requests.*/\1/p')
  # Ideal: C/(R·L) in steady state. With N cases a run cannot beat its critical path: the simulator's ⌈S/C⌉ waves,
  # then ⌈N/C⌉ waves of the per-case calls (R - S/N) — both are shown.
  awk -v c="$c" -v n="$cases" -v w="$wall" -v q="$reqs" -v s="${sims:-0}" 'BEGIN { r = q / n; ideal = c / (r * 0.1); got = n / w;
    rc = (q - s) / n; bound = (int((s + c - 1) / c) + int((n + c - 1) / c) * rc) * 0.1; wave_ideal = n / bound;
    printf "C=%-3d cases=%d R=%.2f wall=%.2fs throughput=%.1f cases/s ideal C/(R·L)=%.1f (%.1f%%) critical-path ideal=%.1f (%.1f%%)\n",
      c, n, r, w, got, ideal, 100 * got / ideal, wave_ideal, 100 * got / wave_ideal }'
done
start_mock 0
out=$(run 0 16)
read -r wall user sys <<<"$(echo "$out" | tail -1)"
cases=$(echo "$out" | sed -nE 's/^([0-9]+) cases in.*/\1/p')
awk -v n="$cases" -v u="$user" -v s="$sys" 'BEGIN { printf "latency 0: gauntlet CPU per attack (simulator share + attacker + target + judge calls) = %.3f ms\n", 1000 * (u + s) / n }'
