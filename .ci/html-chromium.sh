#!/usr/bin/env bash
# Loads HTML reports in headless Chromium (Debian's `chromium` package) and fails if any script ran in them.
#
# Usage: .ci/html-chromium.sh REPORT.html [MORE.html ...]
#
# Meant for the reports of the hostile-content test, whose payloads leave a mark when they run (a `data-pwned`
# attribute, or the title `PWNED`):
#   GAUNTLET_HOSTILE_HTML_OUT="$PWD/target/hostile.html" cargo test -p gauntlet-report --test html
#   .ci/html-chromium.sh target/hostile.html target/hostile-redteam.html
#
# Each report is loaded twice: as written, and with its Content-Security-Policy removed, so that escaping alone
# is shown to hold (the CSP is only defense in depth). Each load must show the payload as text and carry no
# mark. Control pages whose script and event handler do run come first: a Chromium that runs no script at all
# cannot pass.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 REPORT.html [MORE.html ...]" >&2
  exit 2
fi
command -v chromium >/dev/null || { echo "chromium not found (apt-get install -y chromium)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Dumps the DOM of $1 (a file) after load into $2.
dump() {
  local profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  if ! timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
      --disable-background-networking --disable-component-update --disable-sync \
      --user-data-dir="$profile" --virtual-time-budget=5000 \
      --dump-dom "file://$(realpath "$1")" >"$2" 2>"$work/chromium.log"; then
    echo "FAIL: chromium could not load $1" >&2
    tail -20 "$work/chromium.log" >&2
    exit 1
  fi
  if ! grep -q '</html>' "$2"; then
    echo "FAIL: chromium dumped no document for $1" >&2
    tail -20 "$work/chromium.log" >&2
    exit 1
  fi
}

# Whether the dumped DOM $1 shows that a script ran.
pwned() {
  grep -q 'data-pwned="' "$1" || grep -q '<title>PWNED</title>' "$1"
}

# Controls: the same marks, left by a script and by an event handler that are meant to run.
printf '%s\n' '<!DOCTYPE html><html><head><title>control</title></head><body>' \
  "<script>document.body.setAttribute('data-pwned','control')</script></body></html>" >"$work/control-script.html"
printf '%s\n' '<!DOCTYPE html><html><head><title>control</title></head><body>' \
  "<img src=\"missing.png\" onerror=\"document.title='PWNED'\"></body></html>" >"$work/control-handler.html"
for c in control-script control-handler; do
  dump "$work/$c.html" "$work/$c.dom"
  if ! pwned "$work/$c.dom"; then
    echo "FAIL: the control page $c ran no script: this Chromium cannot tell" >&2
    exit 1
  fi
done

status=0
for report in "$@"; do
  [ -f "$report" ] || { echo "FAIL: $report: no such file" >&2; exit 1; }
  name=$(basename "$report" .html)
  # The same report without its CSP (the meta element sits on a line of its own).
  grep -v 'http-equiv="Content-Security-Policy"' "$report" >"$work/$name-nocsp.html" || true
  if cmp -s "$report" "$work/$name-nocsp.html"; then
    echo "FAIL: $report carries no Content-Security-Policy" >&2
    status=1
  fi
  for variant in "$report" "$work/$name-nocsp.html"; do
    label="$report"
    [ "$variant" = "$report" ] || label="$report (CSP removed)"
    dom="$work/$name-$RANDOM.dom"
    dump "$variant" "$dom"
    if pwned "$dom"; then
      echo "FAIL: a script ran in $label" >&2
      grep -o 'data-pwned="[^"]*"\|<title>PWNED</title>' "$dom" | sort -u >&2
      status=1
    elif ! grep -qF "&lt;script&gt;document.body.setAttribute('data-pwned'" "$dom"; then
      echo "FAIL: $label does not show the payload as text" >&2
      status=1
    else
      echo "ok: $label: payloads shown as text, no script ran"
    fi
  done
done
exit "$status"
