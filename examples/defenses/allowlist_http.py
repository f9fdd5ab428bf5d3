#!/usr/bin/env python3
"""The allowlist defense of allowlist.py served over HTTP (protocol: docs/defenses.md).

    python3 examples/defenses/allowlist_http.py --port 8765
    gauntlet run --defense external:http://127.0.0.1:8765/decide

Binds loopback only. Prints `listening on PORT` once ready (use --port 0 for any free port). Standard library only.
"""
import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from allowlist import handle  # noqa: E402  (the same policy as the stdio example)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one connection serves the whole run

    def do_POST(self):  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", "0"))
        try:
            reply = handle(json.loads(self.rfile.read(length)))
            status = 200
        except (ValueError, KeyError) as e:
            reply, status = {"error": str(e)}, 400
        body = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet: stdout carries the port line only
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8765)
    a = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
