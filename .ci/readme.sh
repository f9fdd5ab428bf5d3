#!/usr/bin/env bash
# The README followed top to bottom (issue 15). Its two set-up commands are what `.ci/run` runs; this runs every
# line of its usage block, in order, in a fresh directory, the way a new user pastes them. What a line names but a
# fresh machine lacks is filled in by local stand-ins, never by editing the line's flags:
#   - every `provider/model` (OpenAI and Anthropic) is answered by `gauntlet-mock`, reached through the base-URL
#     variables the SDKs read (OPENAI_BASE_URL, ANTHROPIC_BASE_URL) with dummy keys;
#   - the app at http://127.0.0.1:9000/chat is a small HTTP app of the documented contract;
#   - `my_agent.py` is the project's scripted MCP agent, `npx some-mcp-server` its MCP server (official Python SDK,
#     from $GAUNTLET_MCP_PYTHON);
#   - RUN_ID is `latest`, rules.yaml the example policy, agentdojo.json the export of $GAUNTLET_AGENTDOJO_EXPORT.
# Each line must exit as the README says: 0, except where EXPECT below names another code. Needs the release
# binaries (`cargo build --release -p gauntlet-cli -p gauntlet-mock`), or those of $GAUNTLET_BIN_DIR (CI: the debug
# build its tests already made).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${GAUNTLET_BIN_DIR:-$root/target/release}" && pwd)
[ -x "$bin/gauntlet" ] && [ -x "$bin/gauntlet-mock" ] || {
  echo "readme.sh: no binaries in $bin: cargo build --release -p gauntlet-cli -p gauntlet-mock" >&2
  exit 2
}
python=${GAUNTLET_MCP_PYTHON:-python3}
"$python" -c 'import mcp' 2>/dev/null || {
  echo "readme.sh: $python has no MCP SDK (set GAUNTLET_MCP_PYTHON, as .ci/run does)" >&2
  exit 2
}

# Lines that exit non-zero by design, as the README documents them.
declare -A EXPECT=(
  ["gauntlet cases routes suites/heldout/*.yaml"]=1                     # a few held-out routes are mis-scored
  ["gauntlet run --fail-on 'asr > 0.10' --fail-on 'utility < 0.9'"]=3   # a gate holds (the compliant agent)
)

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
ln -s "$root/examples" examples
ln -s "$root/suites" suites
cp "$root/crates/gauntlet-cli/tests/mcp/agent.py" my_agent.py
cp "$root/examples/defenses/policy.yaml" rules.yaml
if [ -n "${GAUNTLET_AGENTDOJO_EXPORT:-}" ]; then cp "$GAUNTLET_AGENTDOJO_EXPORT" agentdojo.json; fi
mkdir -p stand-ins
# `npx some-mcp-server`: a command that starts an MCP server on stdio.
printf '#!/bin/sh\nexec "%s" "%s"\n' "$python" "$root/crates/gauntlet-cli/tests/mcp/server.py" > stand-ins/npx
chmod +x stand-ins/npx
# `python3 my_agent.py` needs the MCP SDK: `python3` is the one that has it (a wrapper, not a link: a venv's Python
# finds its packages from the path it is started by).
printf '#!/bin/sh\nexec "%s" "$@"\n' "$(command -v "$python")" > stand-ins/python3
chmod +x stand-ins/python3
export PATH="$work/stand-ins:$bin:$PATH"

port=18391
"$bin/gauntlet-mock" --port "$port" > mock.log 2>&1 &
pids+=($!)
# The app: answers every turn with one line, and calls no tool.
cat > app.py <<'EOF'
import json, http.server
class App(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        out = json.dumps({"output": "I read your message: " + str(body.get("input", ""))[:80]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", 9000), App).serve_forever()
EOF
python3 app.py &
pids+=($!)
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/stats" >/dev/null && curl -s -o /dev/null -X POST -d '{}' http://127.0.0.1:9000/chat && break
  sleep 0.1
done
export OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=readme-dummy
export ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=readme-dummy
export APP_TOKEN=readme-dummy
# What an MCP client says to a stdio server (`gateway serve`, `gateway proxy`) before it hangs up.
cat > mcp-session.jsonl <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"readme","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
EOF

# The usage block, one command per line, its comment dropped.
mapfile -t lines < <(awk '/^## Usage/ { u = 1 } u && /^```sh/ { b = 1; next } b && /^```/ { exit } b { print }' \
  "$root/README.md" | sed -E 's/[[:space:]]+# .*$//')
[ "${#lines[@]}" -ge 10 ] || { echo "readme.sh: no usage block found in README.md" >&2; exit 1; }
failed=0
n=0
for line in "${lines[@]}"; do
  [ -n "$line" ] || continue
  n=$((n + 1))
  cmd=${line//RUN_ID/latest}
  if [[ $cmd == *agentdojo.json* && ! -f agentdojo.json ]]; then
    echo "skip  $cmd   (no GAUNTLET_AGENTDOJO_EXPORT)"
    continue
  fi
  want=${EXPECT[$line]:-0}
  start=$(date +%s.%N)
  set +e
  input=/dev/null
  [[ $cmd == "gauntlet gateway "* ]] && input=mcp-session.jsonl
  # No line may hang CI: ten minutes each at most (the slowest takes a minute and a half).
  timeout 600 bash -c "$cmd" < "$input" > "out.$n" 2> "err.$n"
  got=$?
  if [[ $input != /dev/null ]] && ! grep -q '"tools"' "out.$n"; then
    echo "      no tool list came back over MCP" >> "err.$n"
    got=99
  fi
  set -e
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  if [ "$got" -eq "$want" ]; then
    printf 'ok    %-100s exit %d, %.1f s\n' "$cmd" "$got" "$secs"
  else
    printf 'FAIL  %-100s exit %d, README says %d\n' "$cmd" "$got" "$want"
    tail -n 15 "err.$n" | sed 's/^/      /'
    failed=$((failed + 1))
  fi
done
echo "readme.sh: $n commands, $failed failed"
[ "$failed" -eq 0 ]
